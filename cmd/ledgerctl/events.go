package main

// The event commands are for the two kinds of readers of the event contract
// (contract §9, docs/events.md):
//
//   - auditors: "events export" writes the event store's sequenced events,
//     the full stored CloudEvents envelopes (personal data included), as
//     NDJSON in position order, resumably (events_export.go);
//   - analytics consumers: "events tail" follows the NATS JetStream stream,
//     where the same events are published without personal data; it is the
//     reference example of a consumer (events_tail.go).

func init() {
	register("events export",
		"events export [--after POS] [--tenant ID] [--type TYPE] [--limit N] [--out FILE] [--public]",
		"write the sequenced events as NDJSON in position order, resumably (-h for details)",
		eventsExport)
	register("events tail",
		"events tail [--subject FILTER] [--durable NAME] [--from-start] [--stream LEDGER]",
		"follow the NATS stream and print each event as a JSON line until Ctrl-C (-h for details)",
		eventsTail)
}
