// Tests import the fault server from here; the implementation is plain JS so a
// benchmark can also run it as a separate process.
export { startFaultServer, defaultVerdict, formatReset, seeded } from './fault-server.mjs';
export type {
  FaultAction,
  FaultServer,
  FaultServerOptions,
  FaultServerStats,
  FaultVerdict,
  RecordedRequest,
  ResetFormat,
} from './fault-server.mjs';
