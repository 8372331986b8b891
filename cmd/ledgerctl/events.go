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

import (
	"errors"
	"flag"
	"fmt"
)

// parseEventsFlags parses an event command's flags with help as the text
// of -h. It reports false when the command is done (help was shown); an
// argument no flag takes is an error.
func parseEventsFlags(fs *flag.FlagSet, help string, args []string) (bool, error) {
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), help)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return false, nil
		}
		return false, err
	}
	if fs.NArg() > 0 {
		return false, fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return true, nil
}
