package bench

import "github.com/rpcdash/rpcdash/engine"

// shownFailures makes what each failed sample says fit to print and keep:
// a target's error answer or Go's error ("Post \"…/v2/KEY\": EOF") may
// quote the key of a provider's URL given to --target, and an answer may
// carry escape sequences for the terminal the report is printed on.
func shownFailures(samples []Sample, urls []string) {
	sc := engine.NewTextScrubber(urls)
	for i := range samples {
		s := &samples[i]
		if s.Err != "" {
			s.Err = sc.Shown(s.Err)
		}
		if s.Message != "" {
			s.Message = sc.Shown(s.Message)
		}
	}
}
