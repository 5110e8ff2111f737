package sampledb

// Word lists the generated strings are drawn from. They are fixed: the seed
// only chooses among them.
var (
	firstNames = []string{"James", "Mary", "Robert", "Patricia", "John", "Jennifer", "Michael", "Linda",
		"David", "Elizabeth", "William", "Barbara", "Richard", "Susan", "Joseph", "Jessica", "Thomas", "Sarah",
		"Charles", "Karen", "Daniel", "Lisa", "Matthew", "Nancy", "Anthony", "Betty", "Mark", "Sandra",
		"Zoë", "José", "François", "Björn", "Łukasz", "Søren", "Ngozi", "Hiroshi", "Ana", "Chloé"}
	lastNames = []string{"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis",
		"Rodriguez", "Martinez", "Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas", "Taylor",
		"Moore", "Jackson", "Martin", "Lee", "Perez", "Thompson", "White", "Harris", "Müller", "Núñez",
		"O'Brien", "Dvořák", "Åberg", "Okafor", "Tanaka"}
	cities = []string{"Springfield", "Riverside", "Franklin", "Greenville", "Bristol", "Clinton", "Fairview",
		"Salem", "Madison", "Georgetown", "Arlington", "Ashland", "Dover", "Oxford", "Jackson", "Burlington",
		"Manchester", "Milton", "Newport", "Auburn", "Lyon", "Köln", "São Paulo", "Zürich", "Kraków"}
	countries = []string{"US", "US", "US", "GB", "DE", "FR", "BR", "CH", "PL", "CA", "JP", "NG", "SE", "ES"}
	words     = []string{"carefully", "final", "deposits", "detect", "slyly", "regular", "accounts", "furiously",
		"pending", "requests", "ironic", "packages", "blithely", "express", "theodolites", "quickly", "bold",
		"foxes", "even", "instructions", "special", "platelets", "unusual", "pinto", "beans", "sleep", "fluffily",
		"against", "the", "silent", "courts", "haggle", "along", "asymptotes", "dependencies", "wake"}
	productAdj  = []string{"Ergonomic", "Rustic", "Sleek", "Small", "Large", "Durable", "Compact", "Heavy-Duty", "Lightweight", "Premium"}
	productNoun = []string{"Chair", "Table", "Lamp", "Keyboard", "Backpack", "Bottle", "Wallet", "Jacket", "Clock", "Speaker", "Mug", "Notebook"}
	nonASCII    = []string{"naïve café", "Straße", "Ελληνικά", "Привет, мир", "日本語テキスト", "中文字符", "한국어",
		"עברית", "العربية", "emoji 😀🚀", "Ünïcödé", "Ñandú", "Œuvre €5", "ﬁligree", "𝄞 music"}
)

// pool is a set of strings with their wire encodings precomputed, so the fast
// path appends a value with one copy.
type pool struct {
	vals []string
	wire []byte
	off  []uint32 // len(vals)+1 offsets into wire
}

// newPool encodes every value with enc (which must include the length prefix).
func newPool(vals []string, enc func(dst []byte, s string) []byte) *pool {
	p := &pool{vals: vals, off: make([]uint32, 1, len(vals)+1)}
	for _, s := range vals {
		p.wire = enc(p.wire, s)
		p.off = append(p.off, uint32(len(p.wire)))
	}
	return p
}

func (p *pool) pick(h uint64) int { return int((h & 0xFFFFFFFF) * uint64(len(p.vals)) >> 32) }

func (p *pool) appendWire(dst []byte, k int) []byte {
	return append(dst, p.wire[p.off[k]:p.off[k+1]]...)
}

// encNVarchar encodes a string for an nvarchar column.
func encNVarchar(dst []byte, s string) []byte {
	n := len(dst)
	dst = appendUShortBytes(dst, nil)
	dst = appendUTF16(dst, s)
	l := len(dst) - n - 2
	dst[n], dst[n+1] = byte(l), byte(l>>8)
	return dst
}

// padUnits truncates or pads s with blanks to exactly n units: UTF-16 code
// units when wide (nchar), else characters (char with a single-byte code page).
func padUnits(s string, n int, wide bool) string {
	var out []rune
	used := 0
	for _, r := range s {
		u := 1
		if wide && r >= 0x10000 {
			u = 2
		}
		if used+u > n {
			break
		}
		out = append(out, r)
		used += u
	}
	for ; used < n; used++ {
		out = append(out, ' ')
	}
	return string(out)
}
