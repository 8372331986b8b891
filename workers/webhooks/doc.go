// Package webhooks is the HTTP side of webhook delivery (contract §8): it signs
// payloads the Standard Webhooks way (https://www.standardwebhooks.com), posts
// them to a merchant's URL once per call, and keeps that URL from reaching the
// ledger's own network (SSRF). It holds no state: the durable queue decides
// when to call Deliver again and records each Attempt.
package webhooks
