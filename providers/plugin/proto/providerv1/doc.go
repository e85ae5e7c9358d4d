// Package providerv1 is the generated gRPC code of the rackform provider
// protocol, major version 1 (../v1/provider.proto). Do not edit the .pb.go
// files: change the .proto and run `make generate` (needs protoc,
// protoc-gen-go v1.36.12 and protoc-gen-go-grpc v1.6.2).
package providerv1

//go:generate protoc --proto_path=../../../.. --go_out=../../../.. --go_opt=module=github.com/rackform/rackform --go-grpc_out=../../../.. --go-grpc_opt=module=github.com/rackform/rackform providers/plugin/proto/v1/provider.proto
