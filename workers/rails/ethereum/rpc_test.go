package ethereum

import (
	"encoding/json"
	"testing"
)

// A Transfer log as geth --dev answered eth_getLogs for the test token.
const gethTransferLog = `{"address":"0x3a220f351252089d385b29beca14e27f204c296a","topics":["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef","0x00000000000000000000000071562b71999873db5b286df957af199ec94617f7","0x000000000000000000000000aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"],"data":"0x00000000000000000000000000000000000000000000000000000000000f4240","blockNumber":"0x2","transactionHash":"0x309c7b0035c59499b588ef3d4a53609a80be20e2ac221f1eaf99fec2a21ed670","transactionIndex":"0x0","blockHash":"0xeb7eeab4147165fefd66538ccaedd8fc454e1c84e715e83c3b85aefc0657628d","blockTimestamp":"0x6b0ba82d","logIndex":"0x0","removed":false}`

func TestTransferLog(t *testing.T) {
	t.Parallel()
	if want := "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"; TransferTopic != want {
		t.Errorf("TransferTopic: got %s, want %s", TransferTopic, want)
	}
	var l Log
	if err := json.Unmarshal([]byte(gethTransferLog), &l); err != nil {
		t.Fatal(err)
	}
	from, to, value, err := l.transfer()
	if err != nil || from != "0x71562b71999873db5b286df957af199ec94617f7" || to != "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" ||
		value.Int64() != 1_000_000 || l.BlockNumber != 2 || l.LogIndex != 0 {
		t.Errorf("got %s to %s, %v, %v in block %d at %d; want 1000000 from 0x7156..17f7 to 0xaa..aa in block 2 at 0", from, to, value, err,
			l.BlockNumber, l.LogIndex)
	}
	if got := addressTopic("0xAaAaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"); got != l.Topics[2] {
		t.Errorf("addressTopic: got %s, want %s", got, l.Topics[2])
	}
	for name, bad := range map[string]Log{
		"another event":    {Topics: []string{l.Topics[1], l.Topics[1], l.Topics[2]}, Data: l.Data},
		"from not indexed": {Topics: []string{TransferTopic, l.Topics[2]}, Data: l.Data},
		"short data":       {Topics: l.Topics, Data: "0x0f4240"},
		"data not hex":     {Topics: l.Topics, Data: "0x" + string(make([]byte, 64))},
	} {
		if _, _, _, err := bad.transfer(); err == nil {
			t.Errorf("%s: read as a Transfer", name)
		}
	}
	var q quantity
	for _, s := range []string{`"12"`, `"0x"`, `12`} {
		if err := json.Unmarshal([]byte(s), &q); err == nil {
			t.Errorf("quantity %s: took it as %d", s, q)
		}
	}
}
