// Package metrics declares every Prometheus metric xbot exports, in one
// place, and serves them on /metrics.
//
// Each process has one registry (Registry) holding the Go runtime's and the
// process's collectors and the metrics below. Names start with xbot_ and end
// in their unit (_seconds, _records, _bytes, _total). Labels take values from
// small fixed sets only — a partition number, a view, a stage, a route
// template, a status code, a registered tool's name — never run ids, tenant
// ids or free text: a label value is a time series of its own in every
// scrape, and it is seen by whoever reads the metrics, who is not a tenant.
// Values a caller passes that could grow without bound (tool names, routes)
// are capped: past a fixed number of distinct values they count as "other".
//
// The observe functions are cheap enough for the hot paths (one histogram or
// counter update each) and safe for concurrent use. docs/operations.md lists
// every metric.
package metrics
