// Package jsonrpc is JSON-RPC as the engine reads it: the codec (requests
// parsed without copying, element by element, answers written and
// inspected; ids compared by value), the chains' method tables (class,
// hedgeability, cost weight, tip dependence, block and filter params,
// finality pinning) and whose fault an error answer is (Blame). It knows
// nothing of endpoints or routing.
package jsonrpc
