import ArgumentParser
import Crypto
import FitBaseFakeAPNs
import Foundation

/// `fitbase-fake-apns`: a ``FakeAPNsServer`` in its own process, for benchmarks (`scripts/bench/bench-apns.sh`) and the
/// journey (`.ci/run`: the journey reads `--record` to see its pushes arrive).
///
/// Prints `port <n>` once listening, writes its CA certificate to `--ca-out` (for `FITBASE_APNS_TEST_CA_FILE`) and,
/// with `--key-out`, a fresh APNs auth key (for `FITBASE_APNS_KEY_FILE`) whose public half it then checks tokens
/// against. With `--expect N` it prints a summary line once N pushes were accepted; with `--record FILE` it appends each
/// accepted push to FILE as one line of JSON (`{"deviceToken", "topic", "payload"}`) within a tenth of a second. It runs
/// until killed.
@main
struct FakeAPNsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fitbase-fake-apns", abstract: "A fake Apple push gateway (HTTP/2, TLS) for benchmarks."
    )

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port (0: a free one, printed).") var port = 0
    @Option(help: "Where to write the CA certificate (PEM) the server's certificate chains to.") var caOut: String
    @Option(help: "Where to write a new APNs auth key (.p8) for the provider.") var keyOut: String?
    @Option(help: "An existing APNs auth key (.p8) whose tokens to accept, instead of --key-out.") var keyFile: String?
    @Option(help: "Team id the tokens' iss must name.") var teamID = "BENCHTEAM1"
    @Option(help: "Key id the tokens' kid must name.") var keyID = "BENCHKEY01"
    @Option(help: "The only apns-topic accepted.") var topic = "app.fitbase.bench"
    @Option(help: "Print a summary once this many pushes were accepted.") var expect: Int?
    @Option(help: "Append every accepted push to this file, one JSON line each.") var record: String?

    func validate() throws {
        guard (keyOut == nil) != (keyFile == nil) else { throw ValidationError("give exactly one of --key-out and --key-file") }
    }

    func run() async throws {
        let key: P256.Signing.PrivateKey
        if let keyFile {
            guard let pem = FileManager.default.contents(atPath: keyFile) else { throw ValidationError("cannot read \(keyFile)") }
            key = try P256.Signing.PrivateKey(pemRepresentation: String(decoding: pem, as: UTF8.self))
        } else {
            key = P256.Signing.PrivateKey()
            if let keyOut {
                try write(key.pemRepresentation, to: keyOut)
            }
        }
        let server = try await FakeAPNsServer.start(
            .init(teamID: teamID, keyID: keyID, publicKey: key.publicKey, topic: topic), host: host, port: port
        )
        try write(server.certificateAuthorityPEM, to: caOut)
        if let record {
            try write("", to: record)
            Task { try await Self.record(server, to: record) }
        }
        say("port \(server.port)")

        if let expect {
            let start = ContinuousClock.now
            while !(await server.waitUntilAccepted(expect, timeout: .seconds(3_600))) {}
            say(
                "accepted \(server.acceptedCount) pushes (\(start.duration(to: .now)) after start); refused \(server.refusals.count); "
                    + "provider tokens \(server.distinctProviderTokens); connections \(server.connectionsAccepted)"
            )
        }
        while true {
            try await Task.sleep(for: .seconds(3_600))
        }
    }

    /// Appends the pushes `server` accepts to the file at `path`, as they arrive.
    private static func record(_ server: FakeAPNsServer, to path: String) async throws {
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        var written = 0
        while true {
            let accepted = server.accepted
            for push in accepted.dropFirst(written) {
                let line: [String: Any] = [
                    "deviceToken": push.deviceToken, "topic": push.headers["apns-topic"] ?? "",
                    "payload": (try? JSONSerialization.jsonObject(with: push.payload)) ?? String(decoding: push.payload, as: UTF8.self),
                ]
                file.seekToEndOfFile()
                file.write(try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]) + Data("\n".utf8))
            }
            written = accepted.count
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// One line on standard output, at once (the benchmark script reads it while the server runs).
    private func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    private func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }
}
