package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tdsextract/tdsextract/plugins/internal/pluginpb"
	"github.com/tdsextract/tdsextract/sinks"
)

// Handshake is the go-plugin handshake of tdsextract sink plugins. The
// cookie only tells a plugin binary that a host started it (run by hand,
// it says so and exits); it is not a security measure (sha256 is).
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "TDSEXTRACT_SINK_PLUGIN",
	MagicCookieValue: "3f9c1e0a-arrow-batches",
}

// pluginName is the name a plugin's service is dispensed under.
const pluginName = "sink"

// maxMessage bounds one gRPC message: a batch sent as bytes (the
// fallback transport) is at most batch_bytes.
const maxMessage = maxBatchBytes + 1<<20

// grpcPlugin joins the protocol to go-plugin: the plugin side serves a
// Plugin, the host side gets the generated client.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	p *Plugin // plugin side only
}

func (g *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pluginpb.RegisterSinkServer(s, &server{p: g.p})
	return nil
}

func (g *grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pluginpb.NewSinkClient(c), nil
}

func pluginSets(p *Plugin) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{ProtocolVersion: {pluginName: &grpcPlugin{p: p}}}
}

// Serve runs a plugin: call it from main and nothing else. It serves the
// host that started the process until the host ends it, then exits the
// process. Run by hand, it explains that the binary is a plugin and exits
// with status 1.
func Serve(p Plugin) {
	if err := p.validate(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: pluginSets(&p),
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(maxMessage))...)
		},
		// go-plugin's own messages: only its errors, as JSON, which the
		// host logs with the plugin's name.
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Error, Output: os.Stderr, JSONFormat: true}),
	})
}

// server is the plugin side of the protocol: one extract per process.
type server struct {
	pluginpb.UnimplementedSinkServer
	p *Plugin

	mu       sync.Mutex
	sink     Sink
	reader   *batchReader
	shm      []byte
	unmap    func() error
	slots    int
	slotSize int
}

// sdkVersion names this package and the module version it was built
// from, for the host's log.
func sdkVersion() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/tdsextract/tdsextract" {
				v = d.Version
			}
		}
		if bi.Main.Path == "github.com/tdsextract/tdsextract" {
			v = bi.Main.Version
		}
	}
	return fmt.Sprintf("tdsextract plugins protocol %d, %s", ProtocolVersion, v)
}

func (s *server) Describe(context.Context, *pluginpb.DescribeRequest) (*pluginpb.DescribeResponse, error) {
	opts, err := optionsToProto(s.p.Options)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &pluginpb.DescribeResponse{Name: s.p.Name, Description: s.p.Description, Options: opts, Sdk: sdkVersion()}, nil
}

// failed turns a plugin's error into a status the host reports as it is.
func failed(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Error(codes.Aborted, err.Error())
}

func (s *server) Open(ctx context.Context, req *pluginpb.OpenRequest) (*pluginpb.OpenResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sink != nil {
		return nil, status.Error(codes.FailedPrecondition, "the extract is already open")
	}
	var given map[string]any
	if req.OptionsJson != "" {
		if err := json.Unmarshal([]byte(req.OptionsJson), &given); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "options: %v", err)
		}
	}
	opts, err := s.p.Options.Resolve(given)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "options: %v", prefixOptionErrors("options.", err))
	}
	r, err := newBatchReader(req.Schema)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	resp := &pluginpb.OpenResponse{}
	if m := req.Shm; m != nil {
		// Mapped read-only: the plugin reads the host's batches where
		// they lie. When it cannot, the host sends bytes instead.
		mem, unmap, err := mapReadOnly(uintptr(m.Fd), int(m.Size))
		if err == nil && uint64(m.Slots)*m.SlotSize <= m.Size {
			s.shm, s.unmap, s.slots, s.slotSize = mem, unmap, int(m.Slots), int(m.SlotSize)
			resp.ShmMapped = true
		} else if err == nil {
			_ = unmap()
		}
	}
	info := sinks.ExtractInfo{EstimatedRows: -1}
	if e := req.Extract; e != nil {
		info = sinks.ExtractInfo{Name: e.Name, Schema: e.Schema, Table: e.Table, EstimatedRows: e.EstimatedRows}
	}
	sink := s.p.New()
	if err := sink.Open(ctx, OpenRequest{Schema: r.schema, Options: opts, Extract: info}); err != nil {
		// What a failed Open made (a temporary file) goes too.
		_ = sink.Abort(ctx)
		r.close()
		return nil, failed(err)
	}
	s.sink, s.reader = sink, r
	return resp, nil
}

// Batches reads each batch where it lies and acknowledges it once the
// plugin's WriteBatch has returned: the host may then reuse its slot.
func (s *server) Batches(stream pluginpb.Sink_BatchesServer) error {
	if s.sink == nil {
		return status.Error(codes.FailedPrecondition, "batches before Open")
	}
	ctx := stream.Context()
	ack := &pluginpb.Ack{}
	for {
		b, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		msg := b.Data
		if msg == nil {
			if s.shm == nil || int(b.Slot) >= s.slots || b.Length > uint64(s.slotSize) {
				return status.Errorf(codes.InvalidArgument, "batch %d: slot %d length %d outside the shared memory", b.Seq, b.Slot, b.Length)
			}
			at := int(b.Slot) * s.slotSize
			msg = s.shm[at : at+int(b.Length)]
		}
		rec, err := s.reader.read(msg)
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "batch %d: %v", b.Seq, err)
		}
		if rec.NumRows() != b.Rows {
			return status.Errorf(codes.InvalidArgument, "batch %d: %d rows, the host says %d", b.Seq, rec.NumRows(), b.Rows)
		}
		if err := s.sink.WriteBatch(ctx, rec); err != nil {
			return status.Errorf(codes.Aborted, "batch %d: %v", b.Seq, err)
		}
		ack.Seq, ack.Slot = b.Seq, b.Slot
		if err := stream.Send(ack); err != nil {
			return err
		}
	}
}

func (s *server) Prepare(ctx context.Context, _ *pluginpb.PrepareRequest) (*pluginpb.PrepareResponse, error) {
	if s.sink == nil {
		return nil, status.Error(codes.FailedPrecondition, "prepare before Open")
	}
	if p, ok := s.sink.(Preparer); ok {
		if err := p.Prepare(ctx); err != nil {
			return nil, failed(err)
		}
	}
	return &pluginpb.PrepareResponse{}, nil
}

func (s *server) Publish(ctx context.Context, _ *pluginpb.PublishRequest) (*pluginpb.PublishResponse, error) {
	if s.sink == nil {
		return nil, status.Error(codes.FailedPrecondition, "publish before Open")
	}
	st, err := s.sink.Publish(ctx)
	s.release()
	if err != nil {
		return nil, failed(err)
	}
	return &pluginpb.PublishResponse{Rows: st.Rows, Bytes: st.Bytes, Files: st.Files}, nil
}

func (s *server) Abort(ctx context.Context, _ *pluginpb.AbortRequest) (*pluginpb.AbortResponse, error) {
	if s.sink == nil {
		return &pluginpb.AbortResponse{}, nil
	}
	err := s.sink.Abort(ctx)
	s.release()
	return &pluginpb.AbortResponse{}, failed(err)
}

// release frees the batch memory once the extract is over.
func (s *server) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reader != nil {
		s.reader.close()
		s.reader = nil
	}
	if s.unmap != nil {
		_ = s.unmap()
		s.unmap, s.shm = nil, nil
	}
}
