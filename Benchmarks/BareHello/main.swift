// The floor FitBase's /healthz is measured against (`scripts/bench/bench-vs-pocketbase.sh`): a bare Hummingbird server
// with one route, GET /healthz answering {"status":"ok"}, and nothing else — no middleware, no OpenAPI layer.
//
//   bench-bare-hello [--port N]      (or PORT=N; 0, the default, picks a free port)
//
// Listens on 127.0.0.1, prints `listening on http://127.0.0.1:PORT` once it accepts connections, and logs at
// warning level (no request logs), as FitBase does in the benchmark.
import Foundation
import Hummingbird
import Logging
import NIOCore

/// `--port N`, else `PORT`, else 0.
func requestedPort() -> Int {
    var arguments = CommandLine.arguments.dropFirst()
    var port = Int(ProcessInfo.processInfo.environment["PORT"] ?? "") ?? 0
    while let argument = arguments.popFirst() {
        guard argument == "--port", let value = arguments.popFirst().flatMap({ Int($0) }) else {
            FileHandle.standardError.write(Data("usage: bench-bare-hello [--port N]\n".utf8))
            exit(64)  // EX_USAGE
        }
        port = value
    }
    return port
}

let port = requestedPort()
let body = ByteBuffer(string: #"{"status":"ok"}"#)
let router = Router()
router.get("/healthz") { _, _ -> Response in
    Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: body))
}

var logger = Logger(label: "bench-bare-hello")
logger.logLevel = .warning
let app = Application(
    router: router,
    configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "bench-bare-hello"),
    onServerRunning: { channel in
        // Written straight to the file descriptor: a pipe would otherwise buffer the line.
        FileHandle.standardOutput.write(Data("listening on http://127.0.0.1:\(channel.localAddress?.port ?? port)\n".utf8))
    },
    logger: logger
)
try await app.runService()
