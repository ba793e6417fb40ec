# Static, non-root image of hubprobe, for building with Docker. scripts/image.sh
# builds the same image with ko (.ko.yaml); the deploy tests hold both to the
# same base, user and entrypoint.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/hubprobe ./cmd/hubprobe

FROM gcr.io/distroless/static-debian12:nonroot
# Where ko puts the binary.
COPY --from=build /out/hubprobe /ko-app/hubprobe
USER 65532:65532
EXPOSE 9754
ENTRYPOINT ["/ko-app/hubprobe"]
