//go:build !wasip1

package serve

import "github.com/scorekit/scorekit/internal/pluginrpc"

// Main serves the registered scorers. Built natively, the program is a hashicorp/go-plugin
// process plugin speaking gRPC: the host starts it, negotiates the protocol version, and
// calls it until it closes the plugin. Run by hand, it says it is a plugin and exits.
func Main() {
	pluginrpc.Serve(factories(), pluginrpc.ProtocolVersion)
}
