# Static, non-root image of hubprobe.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/hubprobe ./cmd/hubprobe

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/hubprobe /bin/hubprobe
USER 65532:65532
EXPOSE 9754
ENTRYPOINT ["/bin/hubprobe"]
