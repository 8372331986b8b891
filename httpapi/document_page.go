package httpapi

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// documentFile is what every document body says of its file: KYC
// documents (contract §3) and payment documents (contract §6) alike. A
// list item carries its download link too.
type documentFile struct {
	FileName     string  `json:"fileName"`
	ContentType  string  `json:"contentType"`
	Size         int64   `json:"size"`
	SHA256       string  `json:"sha256"`
	PresignedURL *string `json:"presignedUrl,omitempty"`
	CreatedAt    string  `json:"createdAt"`
}

// documentPage is a page of documents, newest first, each with a
// presigned download URL valid presignTTL.
type documentPage[B any] struct {
	page[B]
	PresignedURLExpiresInSeconds int `json:"presignedUrlExpiresInSeconds"`
}

// presignedPage is the page of items, next its offset marker: body makes
// an item's body, given the presigned download URL of document id(d).
func presignedPage[D, B any](ctx context.Context, p *Presigner, items []D, next string, id func(D) uuid.UUID,
	body func(d D, link *string) B) (documentPage[B], error) {
	out := documentPage[B]{page: page[B]{Items: make([]B, 0, len(items)), OffsetMarker: nullable(next)},
		PresignedURLExpiresInSeconds: int(presignTTL / time.Second)}
	for _, d := range items {
		link, err := p.Sign(ctx, id(d))
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, body(d, &link))
	}
	return out, nil
}
