package apiv2_test

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/dripfaucet/drip/internal/apiv2"
	"github.com/dripfaucet/drip/internal/operation"
)

var update = flag.Bool("update", false, "rewrite openapi.json from the operations' types")

// TestOpenAPIGenerated keeps the served document a golden file of
// Document (D39): its request and reply schemas come from the operations'
// types, so a change of a type that is not written to openapi.json fails
// here. go test ./internal/apiv2 -run TestOpenAPIGenerated -update
// rewrites it.
func TestOpenAPIGenerated(t *testing.T) {
	got, err := apiv2.Document(operation.New(operation.Deps{}))
	if err != nil {
		t.Fatalf("Document: %v", err)
	}
	if *update {
		if err := os.WriteFile("openapi.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, apiv2.OpenAPI()) {
		t.Errorf("openapi.json is not what Document generates from the operations' types (%d bytes, generated %d): run go test ./internal/apiv2 -run TestOpenAPIGenerated -update", len(apiv2.OpenAPI()), len(got))
	}
}
