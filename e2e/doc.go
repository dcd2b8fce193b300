// Package e2e holds the end-to-end tests of the rpcdash binary against real
// nodes. It runs rpcdash in front of a real Ethereum node and drives it
// with a real client: geth in --dev mode on a loopback port, the rpcdash
// binary built from this repository, and go-ethereum's ethclient and rpc
// client talking to rpcdash's port.
//
// It is a separate Go module so that go-ethereum never becomes a dependency
// of the rpcdash binary; it requires the root module only for its test
// helpers (internal/testutil). The repository's go.work puts both modules in
// one workspace; `./...` never crosses into a nested module, so the README's
// test command names both: `go test ./... ./e2e/...`.
//
// The tests promise that rpcdash is transparent to a real node and client:
// reads are identical byte for byte to asking geth directly, a signed
// transaction is submitted exactly once, revert errors keep their code,
// message and data and do not trip the breaker, filters stay pinned to the
// node that holds them, batches keep geth's per-element answers in order,
// and a stopped node is failed over and readmitted after its cooldown.
//
// geth is found through $RPCDASH_GETH, then the tools cache
// ($HOME/.cache/rpcdash-tools/bin/geth), then $PATH. Without it the tests
// skip with the install command, except when $CI is set: CI never skips.
package e2e
