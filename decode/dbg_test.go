package decode
import "testing"
func TestDbgX(t *testing.T) {
	data := []byte("\xe3\x13\x000000000000000000000\xab000")
	s := NewStream(StreamOptions{ResidencyCap: 4096})
	n, ev, err := s.Next(data)
	t.Log(n, ev, err, s.base)
	n, ev, err = s.Next(data[n:])
	t.Log(n, ev, err, s.base)
}
