// Command genopenapi writes the evaluation service's OpenAPI document (openapi.json at the
// repository's root) from the API's Go types: go generate ./internal/service/api.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/scorekit/scorekit/internal/service/api"
)

func main() {
	out := flag.String("out", "openapi.json", "file to write")
	flag.Parse()
	b, err := api.New(nil, api.Options{}).OpenAPI()
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genopenapi:", err)
		os.Exit(1)
	}
}
