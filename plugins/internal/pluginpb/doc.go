// Package pluginpb is the generated gRPC code of the plugin protocol
// (sink.proto). It stays internal: plugin authors implement the Go
// interface of package plugins, which converts to and from these types.
//
// Regenerate after editing sink.proto (Debian: apt-get install
// protobuf-compiler; the generators from the Go module proxy:
// go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12 and
// google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2):
//
//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative sink.proto
package pluginpb
