package webhooks

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
)

// The classes of a failed Attempt, its Err: a fixed set, and nothing else
// of the failure. Whoever can create payments reads them, and in sandbox
// mode they may point webhooks at the service's own network: the start of
// a target's answer (a NATS banner, a Redis error) would make the log a
// response oracle, and telling a refused port from a reset or a closed one
// a port scanner. The status code of an HTTP answer is recorded beside.
const (
	// FailureBlockedTarget: the host is not, or does not resolve to,
	// public addresses only, or (outside sandbox mode) does not resolve:
	// which of these is not said, or the log would tell internal names.
	FailureBlockedTarget = "blocked_target"
	// FailureInvalidURL: the URL cannot be sent to (not https outside
	// sandbox mode, no host).
	FailureInvalidURL = "invalid_url"
	// FailureConnectionFailed: no answer came over a connection: the name
	// did not resolve (sandbox mode), the port refused, the connection was
	// reset or closed before a whole answer.
	FailureConnectionFailed = "connection_failed"
	// FailureTimeout: no whole answer within the attempt's timeout.
	FailureTimeout = "timeout"
	// FailureTLS: the TLS handshake failed (certificate, protocol).
	FailureTLS = "tls_error"
	// FailureInvalidResponse: the target answered, but not in HTTP.
	FailureInvalidResponse = "invalid_response"
	// FailureHTTPStatus: the target answered with a status other than
	// 2xx (a redirect included: it is not followed); the status code says
	// which.
	FailureHTTPStatus = "http_status"
	// FailureSecretUnusable: the payment's webhookSecret cannot be read or
	// used to sign, so nothing was sent.
	FailureSecretUnusable = "secret_unusable"
)

// classify returns the class of a transport error from http.Client.Do.
func classify(err error, allowPrivate bool) string {
	_, isDNS := errors.AsType[*net.DNSError](err)
	netErr, isNet := errors.AsType[net.Error](err)
	switch {
	case errors.Is(err, ErrNonPublicAddress):
		return FailureBlockedTarget
	case isDNS && !allowPrivate:
		return FailureBlockedTarget
	case isDNS:
		return FailureConnectionFailed
	case errors.Is(err, context.DeadlineExceeded) || isNet && netErr.Timeout():
		return FailureTimeout
	case isTLS(err):
		return FailureTLS
	case isConnectionLost(err):
		return FailureConnectionFailed
	}
	// What is left was read from the target and was not an HTTP answer
	// (net/http reports a malformed one by an untyped error).
	return FailureInvalidResponse
}

// isTLS says whether err is the TLS handshake's: a certificate not
// trusted or not for the host, an alert, or an answer that is not TLS.
func isTLS(err error) bool {
	return errors.Is(err, http.ErrSchemeMismatch) || is[tls.RecordHeaderError](err) || is[tls.AlertError](err) ||
		is[*tls.CertificateVerificationError](err) || is[x509.UnknownAuthorityError](err) ||
		is[x509.HostnameError](err) || is[x509.CertificateInvalidError](err)
}

// isConnectionLost says whether err ended the attempt before an answer:
// refused, reset, closed, unreachable, or cut short by a shutdown. These
// read the same.
func isConnectionLost(err error) bool {
	// net/http's own word for a connection the target closed before it
	// answered, when it had already taken the connection for idle; its
	// error value is not exported, so its text is the only handle.
	if strings.HasSuffix(err.Error(), "http: server closed idle connection") {
		return true
	}
	return is[*net.OpError](err) || errors.Is(err, context.Canceled) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// is says whether err has an error of type E in its chain.
func is[E error](err error) bool {
	_, ok := errors.AsType[E](err)
	return ok
}
