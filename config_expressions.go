package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlExpression is one key/value or table header of a TOML document,
// where it starts and the whole key it defines, named as config errors
// name keys (server.listen, endpoints[1].url).
type tomlExpression struct {
	lineStart int // offset of the line the expression starts on
	line, col int
	key       []string
}

// tomlExpressions are data's expressions in order, as far as it parses;
// complete is false when a syntax error stopped the parser before the end.
func tomlExpressions(data []byte) (exprs []tomlExpression, complete bool) {
	var table []string
	arrays := map[string]int{} // entries of each array of tables so far
	p := unstable.Parser{}
	p.Reset(data)
	for p.NextExpression() {
		e := p.Expression()
		var parts []string
		it := e.Key()
		for it.Next() {
			parts = append(parts, string(it.Node().Data))
		}
		if len(parts) == 0 {
			continue
		}
		first := e.Key()
		first.Next()
		pos := p.Shape(first.Node().Raw).Start
		full := parts
		switch e.Kind {
		case unstable.KeyValue:
			full = append(append([]string{}, table...), parts...)
		case unstable.ArrayTable: // named as errors name it: endpoints[1]
			path := strings.Join(parts, ".")
			full = append(parts[:len(parts)-1:len(parts)-1], fmt.Sprintf("%s[%d]", parts[len(parts)-1], arrays[path]))
			arrays[path]++
			table = full
		default:
			table = parts
		}
		start := bytes.LastIndexByte(data[:pos.Offset], '\n') + 1
		exprs = append(exprs, tomlExpression{lineStart: start, line: pos.Line, col: pos.Column, key: full})
	}
	return exprs, p.Error() == nil
}

// redefinition is where data defines a key or table a second time, the
// error decoding it gave (cause: "toml: key listen is already defined").
// go-toml reports a redefinition without a position, as no DecodeError,
// so the file's own lines are searched: the document is decoded up to
// each expression in turn, and the first whose prefix gives the same
// error is the redefinition. ok is false for any other error.
func redefinition(data []byte, cause error) (line, col int, key []string, ok bool) {
	exprs, _ := tomlExpressions(data)
	for i, e := range exprs {
		end := len(data)
		if i+1 < len(exprs) {
			end = exprs[i+1].lineStart
		}
		var v map[string]any
		err := toml.Unmarshal(data[:end], &v)
		var de *toml.DecodeError
		if err != nil && !errors.As(err, &de) && err.Error() == cause.Error() {
			return e.line, e.col, e.key, true
		}
	}
	return 0, 0, nil, false
}

// keyOnLine is the key whose value holds line, for a value go-toml parsed
// but could not decode (a number out of range), which it reports with a
// position and no key; nil when the document does not parse to the end
// (the error is then its syntax, which no key holds).
func keyOnLine(data []byte, line int) []string {
	exprs, complete := tomlExpressions(data)
	if !complete {
		return nil
	}
	var key []string
	for _, e := range exprs {
		if e.line > line {
			break
		}
		key = e.key
	}
	return key
}
