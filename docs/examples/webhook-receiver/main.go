// Command webhook-receiver is the smallest receiver of the ledger's payment
// webhooks a partner can start from: it checks each request's Standard
// Webhooks signature and timestamp, prints the event and answers 204.
//
//	WEBHOOK_SECRET=whsec_... go run ./docs/examples/webhook-receiver [-addr 127.0.0.1:9000]
//
// It uses the standard library only, so it can be copied out as it is.
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "listen address")
	flag.Parse()
	key, err := signingKey(os.Getenv("WEBHOOK_SECRET"))
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on http://%s", *addr)
	log.Fatal(http.ListenAndServe(*addr, receiver(key, time.Now, os.Stdout)))
}

// signingKey is the HMAC key of a webhookSecret: after "whsec_" it is base64.
func signingKey(secret string) ([]byte, error) {
	if b64, ok := strings.CutPrefix(secret, "whsec_"); ok {
		return base64.StdEncoding.DecodeString(b64)
	}
	if secret == "" {
		return nil, fmt.Errorf("set WEBHOOK_SECRET to the payment's webhookSecret")
	}
	return []byte(secret), nil
}

// receiver answers 204 to a request signed with key within five minutes of
// now, printing its body; 401 to anything else. Duplicates share webhook-id:
// a real receiver records the ids it handled and skips a repeat.
func receiver(key []byte, now func() time.Time, out io.Writer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		id, ts := r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp")
		unix, err := strconv.ParseInt(ts, 10, 64)
		if err != nil || now().Sub(time.Unix(unix, 0)).Abs() > 5*time.Minute {
			http.Error(w, "stale or missing webhook-timestamp", http.StatusUnauthorized)
			return
		}
		mac := hmac.New(sha256.New, key)
		fmt.Fprintf(mac, "%s.%s.%s", id, ts, body)
		want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
		for _, sig := range strings.Fields(r.Header.Get("webhook-signature")) {
			if hmac.Equal([]byte(sig), []byte(want)) { // constant time
				fmt.Fprintf(out, "%s %s\n", id, body)
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		http.Error(w, "bad webhook-signature", http.StatusUnauthorized)
	}
}
