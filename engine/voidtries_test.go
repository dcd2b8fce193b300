package engine_test

import "testing"

// untilJudged runs try until it returns "" (the scenario was set up and
// judged), at most three times. A non-empty return says why that try was
// void: the machine, not the engine, left the scenario not set up (a loaded
// box's stalls), and nothing was asserted; it is logged and try runs again,
// on a fresh harness of its own. A third void try fails the test, the
// machine too loaded to conclude: a scenario never set up must not pass in
// silence. try gets its number n (1 to 3), for a test that judges its
// third try whatever the machine did.
func untilJudged(t *testing.T, try func(n int) (void string)) {
	t.Helper()
	for n := 1; ; n++ {
		void := try(n)
		if void == "" {
			return
		}
		if n == 3 {
			t.Fatalf("in three tries the scenario was never set up (the last: %s): the machine is too loaded to conclude", void)
		}
		t.Logf("try %d void: %s; running again", n, void)
	}
}
