package ethereum

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
)

// transferLogs returns the token contract's Transfer logs to addresses in
// blocks from-to (inclusive), oldest first, with the header of each block
// that has one. The headers are checked against the logs' block hashes:
// a reorganisation during the read is an error, and reading again reads
// the chain as it now is.
func transferLogs(ctx context.Context, rpc *RPC, contract string, addresses []string, from, to uint64) ([]Log, map[uint64]Header, error) {
	var logs []Log
	for chunk := range slices.Chunk(addresses, topicsPerCall) {
		topics := make([]string, len(chunk))
		for i, a := range chunk {
			topics[i] = addressTopic(a)
		}
		got, err := rpc.Logs(ctx, LogFilter{FromBlock: from, ToBlock: to, Address: contract,
			Topics: [][]string{{TransferTopic}, nil, topics}})
		if err != nil {
			return nil, nil, err
		}
		logs = append(logs, got...)
	}
	slices.SortFunc(logs, func(a, b Log) int {
		return cmp.Or(cmp.Compare(a.BlockNumber, b.BlockNumber), cmp.Compare(a.LogIndex, b.LogIndex))
	})
	headers := map[uint64]Header{}
	for _, l := range logs {
		h, ok := headers[uint64(l.BlockNumber)]
		if !ok {
			var err error
			if h, err = rpc.HeaderByNumber(ctx, uint64(l.BlockNumber)); err != nil {
				return nil, nil, err
			}
			headers[h.Number] = h
		}
		if l.Removed || h.Hash != strings.ToLower(l.BlockHash) {
			return nil, nil, fmt.Errorf("block %d was reorganised while it was read; reading it again", h.Number)
		}
	}
	return logs, headers, nil
}
