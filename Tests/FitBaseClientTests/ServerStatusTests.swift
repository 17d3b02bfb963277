import FitBaseClient
import FitBaseServer
import FitBaseTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// The SDK's generated client against a real server on a real socket.
@Suite struct ServerStatusTests {
    @Test(arguments: TestEngines.all)
    func serverStatusReportsAliveReadyAndTheEngine(engine: DatabaseEngine) async throws {
        try await withLiveApp(engine) { server, _ in
            let fitbase = FitBaseClient(serverURL: server)
            let status = try await fitbase.serverStatus()
            #expect(status == ServerStatus(alive: true, ready: true, database: engine.rawValue))
        }
    }

    @Test func unreachableServerIsATransportError() async throws {
        let fitbase = FitBaseClient(serverURL: URL(string: "http://127.0.0.1:1")!)
        await #expect {
            try await fitbase.serverStatus()
        } throws: { error in
            guard case .transport = error as? FitBaseError else { return false }
            return true
        }
    }
}
