// Package window holds the rolling windows the engine measures with: a
// latency histogram (HdrHistogram sub-windows, exact and right-censored
// observations kept apart, quantiles with the Kaplan–Meier product-limit
// estimate) and rolling counters. Each keeps the last span of observations
// and ages the oldest out as time moves; neither knows what it measures.
package window
