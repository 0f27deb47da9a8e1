// Package pluginrpc is the go-plugin glue of scorekit's process runtime, shared by the plugin
// side (sdk/serve) and the host side (host/process): the handshake, the protocol version,
// and the go-plugin Plugin that registers the Scorer service in a plugin and dispenses a
// client to it in the host. The messages are in internal/pluginpb, generated from
// proto/scorekit/plugin/v1/plugin.proto.
package pluginrpc

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/scorekit/scorekit/internal/pluginpb"
	"github.com/scorekit/scorekit/sdk"
)

// ProtocolVersion is the version of the process protocol this build speaks. go-plugin
// negotiates it (VersionedPlugins); a plugin built for another version is refused with a
// message naming both.
const ProtocolVersion = 1

// The magic cookie: a plugin executable started by hand (without it in its environment)
// prints that it is a plugin and exits, instead of waiting for a host.
const (
	CookieKey   = "SCOREKIT_PLUGIN"
	CookieValue = "7c1b4a0e-scorer"
)

// PluginName is the one go-plugin plugin a scorekit process plugin serves; it carries every
// scorer of the artifact.
const PluginName = "scorer"

// Handshake returns go-plugin's handshake config for scorekit plugins.
func Handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  ProtocolVersion,
		MagicCookieKey:   CookieKey,
		MagicCookieValue: CookieValue,
	}
}

// Plugin is the go-plugin plugin of the process runtime. In a plugin, Factories are the
// scorers it serves; in the host it is empty and only dispenses a *Conn.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Factories are the scorers a plugin serves. Unused in the host.
	Factories []func() sdk.Scorer
}

var _ plugin.GRPCPlugin = (*Plugin)(nil)

// GRPCServer registers the Scorer service (plugin side).
func (p *Plugin) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	srv, err := newServer(broker, p.Factories)
	if err != nil {
		return err
	}
	pluginpb.RegisterScorerServer(s, srv)
	return nil
}

// GRPCClient returns a *Conn to the plugin's Scorer service (host side).
func (p *Plugin) GRPCClient(_ context.Context, broker *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &Conn{Scorer: pluginpb.NewScorerClient(c), Broker: broker}, nil
}

// Conn is the host's handle on a started plugin: its Scorer service and the broker through
// which the host serves the Judge back to it.
type Conn struct {
	Scorer pluginpb.ScorerClient
	Broker *plugin.GRPCBroker
}

// ErrorOf converts err to the wire Error: the code of an *sdk.Error, scorer_error otherwise.
func ErrorOf(err error) *pluginpb.Error {
	if err == nil {
		return nil
	}
	r := sdk.FailedErr(err)
	return &pluginpb.Error{Code: r.Error.Code, Message: r.Error.Message}
}

// SDKError converts a wire Error to an *sdk.Error, or nil. An empty code reads as
// scorer_error so a plugin in another language cannot make an error vanish.
func SDKError(e *pluginpb.Error) *sdk.Error {
	if e == nil {
		return nil
	}
	code := e.GetCode()
	if code == "" {
		code = sdk.CodeScorerError
	}
	return &sdk.Error{Code: code, Message: e.GetMessage()}
}

// Fixed flow-control windows on both ends of a plugin connection. A fixed window turns off
// gRPC's bandwidth estimator, which pings the peer as data arrives: on a local socket
// those pings only add wake-ups to every call.
const window = 1 << 20

// MessageSlack is what a message may carry besides the run or result it frames (the
// protobuf fields around it, an error message).
const MessageSlack = 64 << 10

// DialOptions are the host's gRPC options for a plugin connection. A message the host sends
// is at most maxSend bytes (the host's run limit) and one it accepts at most maxRecv (its
// result limit, or a judge request, whichever is larger), each plus MessageSlack: a plugin
// that sends more fails its call with ResourceExhausted, and the host never buffers it.
func DialOptions(maxSend, maxRecv int) []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithInitialWindowSize(window), grpc.WithInitialConnWindowSize(window),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(maxSend+MessageSlack), grpc.MaxCallRecvMsgSize(maxRecv+MessageSlack)),
	}
}

// maxPluginRecv is what a plugin accepts from its host: the host enforces its own run
// limit before it sends, so a plugin takes whatever its host sends (up to 1 GiB) rather
// than failing runs over gRPC's default 4 MiB.
const maxPluginRecv = 1 << 30

// ServerOptions are the plugin's gRPC server options.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.InitialWindowSize(window), grpc.InitialConnWindowSize(window),
		grpc.MaxRecvMsgSize(maxPluginRecv),
	}
}
