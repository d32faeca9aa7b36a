package gateway

import "github.com/prometheus/client_golang/prometheus"

// RegisterMetrics registers the gateway's counters with reg, as
// evgate_* metrics. Go's and the process's own (goroutines, heap,
// resident memory) are the registry's to add.
func (g *Gateway) RegisterMetrics(reg prometheus.Registerer) error {
	s := &g.stats
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "evgate_" + name, Help: help}, f)
	}
	counter := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "evgate_" + name, Help: help}, f)
	}
	for _, c := range []prometheus.Collector{
		gauge("connections", "Open WebSocket connections.", func() float64 { return float64(s.Connections.Load()) }),
		gauge("subscriptions", "Active subscriptions.", func() float64 { return float64(s.Subscriptions.Load()) }),
		gauge("triggers", "Active upstream subscriptions, each shared by the subscriptions with the same provider, subjects and root field.", func() float64 { return float64(s.Triggers.Load()) }),
		counter("events_in_total", "Events received from the sources.", func() float64 { return float64(s.EventsIn.Load()) }),
		counter("events_invalid_total", "Events that were not JSON (delivered as errors).", func() float64 { return float64(s.EventsInvalid.Load()) }),
		counter("events_dropped_total", "Events dropped because a trigger's queue was full.", func() float64 { return float64(s.EventsDropped.Load()) }),
		counter("deliveries_total", "Messages queued to clients for events.", func() float64 { return float64(s.Deliveries.Load()) }),
		counter("slow_consumers_total", "Connections closed because their unsent messages passed the bound.", func() float64 { return float64(s.SlowConsumers.Load()) }),
		counter("upstream_errors_total", "Entity fetches from the upstream that failed.", func() float64 { return float64(s.UpstreamErrors.Load()) }),
		counter("resolve_panics_total", "Panics filtering, fetching entities for or projecting an event: bugs, each logged with its stack; the subscribers concerned got an error result.", func() float64 { return float64(s.ResolvePanics.Load()) }),
		counter("published_total", "Events published by mutations.", func() float64 { return float64(s.Published.Load()) }),
	} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
