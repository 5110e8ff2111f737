// Package plugins is tdsextract's boundary to sink plugins: programs,
// separate processes over hashicorp/go-plugin, that receive an extract's
// rows as Apache Arrow record batches.
//
// For plugin authors: implement Sink (and Preparer when something can
// fail after the last batch), declare the options in a Plugin and call
// Serve from main. README.md in this directory is the guide: the
// interface, the lifetime of a batch's memory, the type mapping, the
// batch layout, building, testing and shipping.
//
// For the host: Host makes the sink factories (type "plugin", and
// "plugin:NAME" for each executable of a plugins directory) whose sinks
// are ordinary sinks.Sink to the engine. Their cell calls lay every value
// once into the Arrow buffers of a batch in a shared-memory ring (memfd,
// handed to the plugin as an extra file); small descriptors go over a
// gRPC stream, the plugin acknowledges each batch, its slot is reused.
// Where shared memory is not available the same batch messages travel as
// gRPC bytes. InProcess runs a plugin inside the host, with the same
// layout and reader, for tests and measurements.
//
// The gRPC code generated from the protocol stays in internal/pluginpb.
package plugins
