// Package testutil holds the helpers every package's tests share, so that
// none of them is written twice: waiting for a condition (WaitUntil),
// capturing what a goroutine logs (SyncBuffer), free loopback ports
// (FreeAddrs), building the rpcdash binary (Binary) and running a child
// process with its output captured (Start, Proc), and stopping a process by
// its PID (Terminate).
//
// It imports the standard library only, and nothing in it runs outside a
// test.
package testutil
