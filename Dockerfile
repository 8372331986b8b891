# ledgerd and ledgerctl in one small image.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/ledgerd ./cmd/ledgerd \
 && CGO_ENABLED=0 go build -trimpath -o /out/ledgerctl ./cmd/ledgerctl

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ledgerd /out/ledgerctl /usr/local/bin/
ENV LEDGER_ADDR=0.0.0.0:8080
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/ledgerd"]
