package main

import (
	"fmt"
	"os"

	pq "github.com/parquet-go/parquet-go"
)

func main() {
	f, _ := os.Open(os.Args[1])
	st, _ := f.Stat()
	pf, err := pq.OpenFile(f, st.Size())
	if err != nil {
		panic(err)
	}
	md := pf.Metadata()
	tot := map[string][2]int64{}
	enc := map[string]string{}
	var keys []string
	for _, rg := range md.RowGroups {
		for _, c := range rg.Columns {
			k := fmt.Sprint(c.MetaData.PathInSchema)
			if _, ok := tot[k]; !ok {
				keys = append(keys, k)
			}
			t := tot[k]
			t[0] += c.MetaData.TotalCompressedSize
			t[1] += c.MetaData.TotalUncompressedSize
			tot[k] = t
			enc[k] = fmt.Sprint(c.MetaData.Type, c.MetaData.Encoding, c.MetaData.Codec)
		}
	}
	fmt.Println("row groups", len(md.RowGroups), "file", st.Size())
	for _, k := range keys {
		t := tot[k]
		fmt.Printf("%-22s comp %9d uncomp %9d %.2f  %s\n", k, t[0], t[1], float64(t[0])/float64(t[1]), enc[k])
	}
}
