# ledgerd and ledgerctl in one small image.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/ledgerd ./cmd/ledgerd \
 && CGO_ENABLED=0 go build -trimpath -o /out/ledgerctl ./cmd/ledgerctl \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ledgerd /out/ledgerctl /usr/local/bin/
# LEDGER_DATA_DIR, owned by the image's user (65532) so that a volume mounted
# there starts writable.
COPY --from=build --chown=65532:65532 /out/data /var/lib/ledger
ENV LEDGER_ADDR=0.0.0.0:8080 LEDGER_DATA_DIR=/var/lib/ledger
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/ledgerd"]
