package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tdsextract/tdsextract/plugins/internal/pluginpb"
	"github.com/tdsextract/tdsextract/sinks"
)

// pluginRef names a plugin executable.
type pluginRef struct {
	name   string // as the job names it: the file's name, or plugin:NAME
	path   string // absolute
	sha256 string // expected, hex; empty: not checked
}

func (r pluginRef) String() string { return fmt.Sprintf("%q (%s)", r.name, r.path) }

// process is one running plugin process.
type process struct {
	ref     pluginRef
	client  *plugin.Client
	cmd     *exec.Cmd
	rpc     pluginpb.SinkClient
	out     *pluginOutput
	streams []*outputStream
	// hung is set when the plugin stopped answering within the timeout:
	// it is then killed at once, not asked to abort.
	hung atomic.Bool
}

// launch starts the plugin executable with extra files (fd 3 onwards in
// the plugin) and completes go-plugin's handshake: the magic cookie, the
// protocol version, mutual TLS on the gRPC channel with certificates made
// for this process alone (AutoMTLS), and, when ref.sha256 is set, the
// executable's checksum checked before it runs (SecureConfig).
func launch(ref pluginRef, extra []*os.File, log *slog.Logger, timeout time.Duration) (*process, error) {
	p := &process{ref: ref, out: &pluginOutput{log: log, name: ref.name}}
	p.streams = []*outputStream{p.out.stream("stderr"), p.out.stream("stdout")}
	p.cmd = exec.Command(ref.path)
	p.cmd.ExtraFiles = extra
	var secure *plugin.SecureConfig
	if ref.sha256 != "" {
		sum, err := hex.DecodeString(ref.sha256)
		if err != nil {
			return nil, fmt.Errorf("sha256: %w", err)
		}
		secure = &plugin.SecureConfig{Checksum: sum, Hash: sha256.New()}
	}
	if timeout <= 0 {
		timeout = time.Minute
	}
	p.client = plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: pluginSets(nil),
		Cmd:              p.cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		SecureConfig:     secure,
		StartTimeout:     timeout,
		// The plugin's stderr (its logs, a panic's stack) and what it
		// prints go to the host's log with its name; go-plugin's own
		// messages are not needed: failures come back as errors.
		Logger:     hclog.New(&hclog.LoggerOptions{Level: hclog.Off, Output: io.Discard}),
		Stderr:     p.streams[0],
		SyncStderr: p.streams[0],
		SyncStdout: p.streams[1],
		GRPCDialOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage))},
	})
	rc, err := p.client.Client()
	if err != nil {
		p.kill()
		if errors.Is(err, plugin.ErrChecksumsDoNotMatch) {
			return nil, fmt.Errorf("refused to run it: its SHA-256 is %s, not the %s of the sha256 option (replace the executable, or update sha256 after checking it)", fileSHA256(ref.path), ref.sha256)
		}
		if last := p.out.lastOutput(); last != "" {
			return nil, fmt.Errorf("%v; its last output: %s", err, last)
		}
		return nil, err
	}
	raw, err := rc.Dispense(pluginName)
	if err != nil {
		p.kill()
		return nil, err
	}
	p.rpc = raw.(pluginpb.SinkClient)
	return p, nil
}

func fileSHA256(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return hex.EncodeToString(h.Sum(nil))
}

// kill ends the process: gracefully when it still answers (go-plugin
// asks it to shut down and waits two seconds), at once when it hangs.
func (p *process) kill() {
	if p.client == nil {
		return
	}
	if hard := p.cmd.Process; hard != nil && p.hung.Load() {
		_ = hard.Kill()
	}
	p.client.Kill()
	for _, s := range p.streams {
		s.flush()
	}
	p.client = nil
}

// exited waits up to d for the process to exit and says how it ended.
func (p *process) exited(d time.Duration) (string, bool) {
	if p.client == nil {
		return "", false // not a process (an in-process test connection)
	}
	for end := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if p.client.Exited() {
			if ps := p.cmd.ProcessState; ps != nil {
				return ps.String(), true
			}
			return "exited", true
		}
		if time.Now().After(end) {
			return "", false
		}
	}
}

// explain turns a failed call into what happened to the plugin: its own
// error, a timeout, or its process gone (with its last output).
func (p *process) explain(err error, timeout time.Duration) error {
	if err == nil {
		return nil
	}
	st, isStatus := status.FromError(err)
	switch {
	case isStatus && st.Code() == codes.DeadlineExceeded && timeout <= 0:
		// No timeout option: the deadline was the extract's own.
		return fmt.Errorf("the plugin did not answer before the extract's deadline: %w", context.DeadlineExceeded)
	case isStatus && st.Code() == codes.DeadlineExceeded:
		return fmt.Errorf("the plugin did not answer within %v (the timeout option): it hangs, or needs a longer timeout", timeout)
	case isStatus && st.Code() != codes.Unavailable && st.Code() != codes.Canceled && st.Code() != codes.Unknown:
		return errors.New(st.Message()) // the plugin's own error
	}
	if how, ok := p.exited(2 * time.Second); ok {
		msg := "the plugin process exited unexpectedly (" + how + ")"
		if last := p.out.lastOutput(); last != "" {
			msg += "; its last output: " + last
		}
		return errors.New(msg)
	}
	if isStatus {
		return fmt.Errorf("lost the connection to the plugin: %s", st.Message())
	}
	return fmt.Errorf("lost the connection to the plugin: %w", err)
}

// remoteConn runs an extract in a plugin process.
type remoteConn struct {
	ref  pluginRef
	opts hostOptions
	log  *slog.Logger
	ctx  context.Context
	proc *process
	shm  *sharedMemory
	fd   uint32 // the shared memory's descriptor in the plugin process
	ring *remoteRing
}

func (c *remoteConn) name() string { return c.ref.String() }

// call bounds an RPC by the timeout option and the extract's context.
func (c *remoteConn) call(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.opts.timeout > 0 {
		return context.WithTimeout(ctx, c.opts.timeout)
	}
	return context.WithCancel(ctx)
}

func (c *remoteConn) start(ctx context.Context, _ sinks.ExtractInfo) error {
	c.ctx = ctx
	var extra []*os.File
	if c.opts.transport != "grpc" {
		m, err := newSharedMemory(c.opts.batchesInFlight * c.opts.batchBytes)
		switch {
		case err == nil:
			// ExtraFiles[0] is descriptor 3 in the plugin.
			c.shm, c.fd, extra = m, 3, []*os.File{m.ro}
		case c.opts.transport == "shm":
			return fmt.Errorf("transport shm: %w", err)
		default:
			c.log.Warn("shared memory is not available: batches go to the plugin as bytes over gRPC, an order of magnitude slower",
				"plugin", c.ref.name, "reason", err.Error())
		}
	}
	p, err := launch(c.ref, extra, c.log, c.opts.timeout)
	if err != nil {
		return err
	}
	c.proc = p
	return nil
}

func (c *remoteConn) open(ctx context.Context, schema []byte, info sinks.ExtractInfo) (slotRing, error) {
	opts, err := json.Marshal(c.opts.plugin)
	if err != nil {
		return nil, fmt.Errorf("options: %w", err)
	}
	req := &pluginpb.OpenRequest{Schema: schema, OptionsJson: string(opts),
		Extract: &pluginpb.ExtractInfo{Name: info.Name, Schema: info.Schema, Table: info.Table, EstimatedRows: info.EstimatedRows}}
	if c.shm != nil {
		req.Shm = &pluginpb.SharedMemory{Fd: c.fd, Size: uint64(len(c.shm.mem)), Slots: uint32(c.opts.batchesInFlight), SlotSize: uint64(c.opts.batchBytes)}
	}
	cctx, cancel := c.call(ctx)
	defer cancel()
	resp, err := c.proc.rpc.Open(cctx, req)
	if err != nil {
		return nil, c.proc.explain(err, c.opts.timeout)
	}
	r := &remoteRing{c: c, free: make(chan int, c.opts.batchesInFlight), done: make(chan struct{}),
		inflight: make([]atomic.Bool, c.opts.batchesInFlight)}
	switch {
	case c.shm != nil && resp.ShmMapped:
		for i := 0; i < c.opts.batchesInFlight; i++ {
			r.slots = append(r.slots, c.shm.mem[i*c.opts.batchBytes:(i+1)*c.opts.batchBytes:(i+1)*c.opts.batchBytes])
		}
		c.log.Debug("batches through shared memory", "plugin", c.ref.name, "slots", c.opts.batchesInFlight, "slot_bytes", c.opts.batchBytes)
	default:
		if c.shm != nil {
			c.log.Warn("the plugin could not map the shared memory: batches go as bytes over gRPC, an order of magnitude slower", "plugin", c.ref.name)
			c.shm.close()
			c.shm = nil
		}
		r.bytes = true
		for i := 0; i < c.opts.batchesInFlight; i++ {
			r.slots = append(r.slots, make([]byte, c.opts.batchBytes))
		}
	}
	for i := range r.slots {
		r.free <- i
	}
	sctx, scancel := context.WithCancel(ctx)
	r.cancel = scancel
	r.stream, err = c.proc.rpc.Batches(sctx)
	if err != nil {
		scancel()
		return nil, c.proc.explain(err, c.opts.timeout)
	}
	c.ring = r
	go r.recv()
	return r, nil
}

func (c *remoteConn) drain(context.Context) error {
	if c.ring == nil {
		return nil
	}
	return c.ring.drain()
}

func (c *remoteConn) prepare(ctx context.Context) error {
	cctx, cancel := c.call(ctx)
	defer cancel()
	_, err := c.proc.rpc.Prepare(cctx, &pluginpb.PrepareRequest{})
	return c.proc.explain(err, c.opts.timeout)
}

func (c *remoteConn) publish(ctx context.Context) (sinks.Stats, error) {
	cctx, cancel := c.call(ctx)
	defer cancel()
	r, err := c.proc.rpc.Publish(cctx, &pluginpb.PublishRequest{})
	if err != nil {
		return sinks.Stats{}, c.proc.explain(err, c.opts.timeout)
	}
	return sinks.Stats{Rows: r.Rows, Bytes: r.Bytes, Files: r.Files}, nil
}

// abort asks a plugin that still answers to remove what it wrote; one
// that hangs or is gone is only stopped.
func (c *remoteConn) abort(ctx context.Context) error {
	if c.proc == nil || c.proc.hung.Load() || c.proc.client != nil && c.proc.client.Exited() {
		return nil
	}
	if c.ring != nil {
		c.ring.cancel() // ends the batch stream
	}
	t := c.opts.timeout
	if t <= 0 || t > 30*time.Second {
		t = 30 * time.Second
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t)
	defer cancel()
	_, err := c.proc.rpc.Abort(actx, &pluginpb.AbortRequest{})
	return c.proc.explain(err, t)
}

func (c *remoteConn) close() {
	if c.ring != nil {
		c.ring.cancel()
	}
	if c.proc != nil {
		c.proc.kill()
	}
	if c.shm != nil {
		c.shm.close()
		c.shm = nil
	}
}

// remoteRing is the ring of batch slots of a plugin process. The
// decoding goroutine takes free slots and sends them; a goroutine reads
// the plugin's acknowledgements and frees their slots. Memory is the
// slots, whatever the number of batches.
type remoteRing struct {
	c        *remoteConn
	slots    [][]byte
	bytes    bool // slots go as bytes (no shared memory)
	free     chan int
	inflight []atomic.Bool
	stream   pluginpb.Sink_BatchesClient
	cancel   context.CancelFunc
	seq      uint64
	batch    pluginpb.Batch

	done chan struct{} // closed when the acknowledgements end
	err  error         // why, set before done is closed (nil: the plugin ended the stream)
}

func (r *remoteRing) recv() {
	defer close(r.done)
	for {
		a, err := r.stream.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				r.err = err
			}
			return
		}
		s := int(a.Slot)
		if s < 0 || s >= len(r.slots) || !r.inflight[s].CompareAndSwap(true, false) {
			r.err = status.Errorf(codes.Internal, "the plugin acknowledged batch %d in slot %d, which it does not hold", a.Seq, a.Slot)
			r.cancel()
			return
		}
		r.free <- s
	}
}

// failure says why the acknowledgements ended.
func (r *remoteRing) failure() error {
	<-r.done
	if r.c.proc.hung.Load() {
		return r.hangError()
	}
	if r.err == nil {
		return errors.New("the plugin ended the batch stream before the last batch")
	}
	return r.c.proc.explain(r.err, r.c.opts.timeout)
}

func (r *remoteRing) hangError() error {
	return fmt.Errorf("the plugin took no batch for %v (the timeout option): it hangs, or needs a longer timeout", r.c.opts.timeout)
}

func (r *remoteRing) acquire() (int, []byte, error) {
	select {
	case i := <-r.free:
		return i, r.slots[i], nil
	default:
	}
	expire := r.expiry()
	select {
	case i := <-r.free:
		return i, r.slots[i], nil
	case <-r.done:
		return 0, nil, r.failure()
	case <-r.c.ctx.Done():
		return 0, nil, r.c.ctx.Err()
	case <-expire:
		r.c.proc.hung.Store(true)
		r.cancel()
		return 0, nil, r.hangError()
	}
}

// expiry returns a channel that receives once the timeout option has
// passed: nil (never) without a timeout. The timer needs no Stop: since
// Go 1.23 one nobody waits on is reclaimed with its channel.
func (r *remoteRing) expiry() <-chan time.Time {
	if t := r.c.opts.timeout; t > 0 {
		return time.After(t)
	}
	return nil
}

func (r *remoteRing) release(slot int) { r.free <- slot }

func (r *remoteRing) send(slot, n int, rows int64) error {
	select {
	case <-r.done:
		return r.failure()
	default:
	}
	r.seq++
	r.inflight[slot].Store(true)
	b := &r.batch
	b.Seq, b.Rows, b.Slot = r.seq, rows, uint32(slot)
	if r.bytes {
		b.Data, b.Length = r.slots[slot][:n], 0
	} else {
		b.Data, b.Length = nil, uint64(n)
	}
	// Send blocks while the plugin does not read (gRPC flow control):
	// bytes batches of a plugin that hangs would block it for good.
	var watchdog *time.Timer
	if t := r.c.opts.timeout; t > 0 && r.bytes {
		watchdog = time.AfterFunc(t, func() { r.c.proc.hung.Store(true); r.cancel() })
	}
	err := r.stream.Send(b)
	if watchdog != nil {
		watchdog.Stop()
	}
	b.Data = nil
	if err != nil {
		select {
		case <-r.done:
			return r.failure()
		case <-time.After(5 * time.Second):
			return r.c.proc.explain(err, r.c.opts.timeout)
		}
	}
	return nil
}

// drain waits until the plugin has acknowledged every batch, then ends
// the stream and waits for the plugin to end it too.
func (r *remoteRing) drain() error {
	for range r.slots {
		if _, _, err := r.acquire(); err != nil {
			return err
		}
	}
	if err := r.stream.CloseSend(); err != nil {
		return r.c.proc.explain(err, r.c.opts.timeout)
	}
	expire := r.expiry()
	select {
	case <-r.done:
	case <-r.c.ctx.Done():
		return r.c.ctx.Err()
	case <-expire:
		r.c.proc.hung.Store(true)
		return fmt.Errorf("the plugin did not end the batch stream within %v (the timeout option)", r.c.opts.timeout)
	}
	if r.err != nil {
		return r.c.proc.explain(r.err, r.c.opts.timeout)
	}
	return nil
}
