package tdsserver

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
)

// Server is a running TDS server. It is safe for concurrent use.
type Server struct {
	cfg   Config
	ln    net.Listener
	cert  tls.Certificate
	caPEM []byte

	nextSPID atomic.Uint32
	faults   atomic.Pointer[Faults]

	mu     sync.Mutex
	conns  map[*conn]struct{}
	closed bool
	done   chan struct{} // closed by Close: wakes stalls and trickles
	wg     sync.WaitGroup

	stats struct {
		connections, logins, loginFailures, attentions, queries, rpcs atomic.Int64
		rowsSent, bytesSent                                           atomic.Int64
	}
}

// Stats is a snapshot of the server's counters.
type Stats struct {
	Connections   int64 // TCP connections accepted
	Logins        int64 // successful LOGIN7 exchanges
	LoginFailures int64 // failed logins (wrong password, unknown user, ...)
	Attentions    int64 // ATTENTION messages received
	Queries       int64 // SQLBatch and RPC requests executed (each RPC of a batch counts)
	RPCs          int64 // RPC requests among Queries
	RowsSent      int64 // rows written in result sets
	BytesSent     int64 // bytes of login and query responses (headers included)
}

// Start listens on cfg.Addr and serves in background goroutines until Close.
func Start(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := cfg.withDefaults()
	s := &Server{cfg: c, conns: make(map[*conn]struct{}), done: make(chan struct{})}
	var err error
	if c.CertFile != "" {
		s.cert, s.caPEM, err = loadCert(c.CertFile, c.KeyFile)
	} else {
		s.cert, s.caPEM, err = generateCert()
	}
	if err != nil {
		return nil, err
	}
	s.ln, err = net.Listen("tcp", c.Addr)
	if err != nil {
		return nil, fmt.Errorf("tdsserver: listen: %w", err)
	}
	s.nextSPID.Store(uint32(c.SPIDBase))
	f := c.Faults
	s.faults.Store(&f)
	s.wg.Add(1)
	go s.acceptLoop()
	c.Logger.Info("tdsserver: listening", "addr", s.ln.Addr().String(), "encryption", string(c.Encryption))
	return s, nil
}

// Addr returns the address the server listens on (host:port).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Port returns the TCP port the server listens on.
func (s *Server) Port() int {
	if a, ok := s.ln.Addr().(*net.TCPAddr); ok {
		return a.Port
	}
	return 0
}

// Insert adds rows to the served database's appendable table
// (dbo.events) while the server runs, as sampledb.DB.Insert does:
// statements that start afterwards see them. It returns the identity
// values the rows got.
func (s *Server) Insert(schema, table string, cols []string, rows [][]any) ([]int64, error) {
	return s.cfg.DB.Insert(schema, table, cols, rows)
}

// SetFaults replaces the fault knobs; requests that start afterwards use
// them (a response being written keeps the faults it started with).
func (s *Server) SetFaults(f Faults) error {
	if err := f.Validate(); err != nil {
		return err
	}
	probe := s.cfg
	probe.Faults = f
	if err := probe.checkFaultTable(); err != nil {
		return err
	}
	s.faults.Store(&f)
	return nil
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	return Stats{
		Connections:   s.stats.connections.Load(),
		Logins:        s.stats.logins.Load(),
		LoginFailures: s.stats.loginFailures.Load(),
		Attentions:    s.stats.attentions.Load(),
		Queries:       s.stats.queries.Load(),
		RPCs:          s.stats.rpcs.Load(),
		RowsSent:      s.stats.rowsSent.Load(),
		BytesSent:     s.stats.bytesSent.Load(),
	}
}

// Close stops listening, closes every connection and waits for all of the
// server's goroutines to end.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	err := s.ln.Close()
	for c := range s.conns {
		c.raw.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.cfg.Logger.Warn("tdsserver: accept", "err", err)
			return
		}
		s.stats.connections.Add(1)
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
		spid := uint16(s.nextSPID.Add(1) - 1)
		if spid == 0 {
			spid = uint16(s.nextSPID.Add(1) - 1)
		}
		c := newConn(s, nc, spid)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			c.serve()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}
