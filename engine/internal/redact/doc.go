// Package redact keeps secrets and hostile text off screens and logs: an
// endpoint URL is shown as scheme, host and port (URL, DisplayURL), the
// configured URLs' secret parts are scrubbed from free text (Scrubber), and
// text an upstream had a hand in is stripped of what a terminal would act
// on and cut to a bound (Sanitize).
package redact
