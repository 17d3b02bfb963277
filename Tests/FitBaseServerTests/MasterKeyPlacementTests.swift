import Crypto
import Foundation
import Testing

@testable import FitBaseServer

/// A server others can reach does not make its master key beside the data by accident (issue 53): it refuses to
/// generate `master.key` in its data directory unless told to, and warns about one that is already there.
@Suite struct MasterKeyPlacementTests {
    /// A reachable server's configuration on a fresh data directory, with `environment` added.
    private func reachable(_ environment: [String: String] = [:]) throws -> ServerConfiguration {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-key-\(UUID().uuidString.prefix(8))").path
        return try ServerConfiguration.resolve(
            environment: ["FITBASE_HOST": "0.0.0.0", "FITBASE_MAIL": "log", "FITBASE_DATA_DIR": directory]
                .merging(environment) { $1 }
        )
    }

    private func keyFile(_ configuration: ServerConfiguration) -> String {
        URL(fileURLWithPath: configuration.dataDirectory).appendingPathComponent("master.key").path
    }

    @Test func aReachableServerRefusesToStartWithAKeyItWouldMakeBesideTheData() async throws {
        let configuration = try reachable()
        defer { try? FileManager.default.removeItem(atPath: configuration.dataDirectory) }
        do {
            _ = try await buildApplication(configuration: configuration)
            Issue.record("a server on 0.0.0.0 made its master key in its data directory")
        } catch let error as ConfigurationError {
            #expect(error.setting == "master-key")
            #expect(error.description.contains("FITBASE_MASTER_KEY") && error.description.contains("FITBASE_ALLOW_GENERATED_MASTER_KEY"))
        }
        #expect(!FileManager.default.fileExists(atPath: keyFile(configuration)))
        // Loopback (`swift run fitbase serve` with no flags) still makes one.
        var loopback = configuration
        loopback.host = "127.0.0.1"
        _ = try MasterKey.load(for: loopback)
        #expect(FileManager.default.fileExists(atPath: keyFile(configuration)))
    }

    @Test func theSettingOrTheFlagLetsAReachableServerMakeItsKey() throws {
        let allowed = try reachable(["FITBASE_ALLOW_GENERATED_MASTER_KEY": "true"])
        defer { try? FileManager.default.removeItem(atPath: allowed.dataDirectory) }
        #expect(allowed.identityProviders.allowsGeneratedMasterKey)
        try FileManager.default.createDirectory(atPath: allowed.dataDirectory, withIntermediateDirectories: true)
        let key = try MasterKey.load(for: allowed)
        let attributes = try FileManager.default.attributesOfItem(atPath: keyFile(allowed))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        // The file made stays the key, and is warned about on every start of a reachable server.
        var refusing = allowed
        refusing.identityProviders.allowsGeneratedMasterKey = false
        #expect(try MasterKey.load(for: refusing).id == key.id)
        #expect(MasterKey.placementWarning(for: refusing)?.contains(keyFile(allowed)) == true)

        #expect(throws: ConfigurationError.self) { try reachable(["FITBASE_ALLOW_GENERATED_MASTER_KEY": "maybe"]) }
        #expect(try !reachable(["FITBASE_ALLOW_GENERATED_MASTER_KEY": "0"]).identityProviders.allowsGeneratedMasterKey)
    }

    @Test func aKeyFromTheEnvironmentOrAnotherVolumeNeedsNoPermission() throws {
        let fromEnvironment = try reachable(["FITBASE_MASTER_KEY": Data(repeating: 7, count: 32).base64EncodedString()])
        #expect(try MasterKey.load(for: fromEnvironment).id == MasterKey(key: .init(data: Data(repeating: 7, count: 32))).id)
        #expect(!FileManager.default.fileExists(atPath: keyFile(fromEnvironment)))

        let elsewhere = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-secret-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        let onAnotherVolume = try reachable(["FITBASE_MASTER_KEY_FILE": elsewhere])
        _ = try MasterKey.load(for: onAnotherVolume)
        #expect(FileManager.default.fileExists(atPath: elsewhere))
        #expect(MasterKey.placementWarning(for: onAnotherVolume) == nil)
    }
}
