import Crypto
import FitBaseClient
import FitBaseCore
import Foundation
import Security
import Testing

/// The Keychain adapters (``KeychainTokenStore``, ``KeychainKeyProvider``) against the Keychain's documented answers.
@Suite(.serialized) struct KeychainTests {
    init() { _SecurityShim.reset() }

    private let session = StoredSession(
        userID: UserID(rawValue: UUID()), accessToken: "access", refreshToken: "refresh",
        accessTokenExpiresAt: Date(timeIntervalSince1970: 1_800_000_000), appleUserIdentifier: "000123.abc")

    @Test func theSessionIsKeptReadableAfterFirstUnlockOnThisDeviceOnly() async throws {
        let store = KeychainTokenStore(service: "test.session")
        #expect(try await store.load() == nil)
        try await store.save(session)
        #expect(try await store.load() == session)
        #expect(_SecurityShim.accessibility(service: "test.session", account: "session") == "cku")
    }

    @Test func savingAgainUpdatesTheItemInsteadOfAddingASecond() async throws {
        let store = KeychainTokenStore(service: "test.session")
        try await store.save(session)
        var renewed = session
        renewed.accessToken = "renewed"
        try await store.save(renewed)
        #expect(try await store.load() == renewed)
        #expect(_SecurityShim.itemCount == 1)
    }

    @Test func signingOutDeletesTheSessionAndKeepsTheDeviceTokenAndInstallID() async throws {
        let store = KeychainTokenStore(service: "test.session")
        try await store.save(session)
        try await store.saveDeviceToken("device-token")
        try await store.saveInstallID("install-1")
        try await store.save(nil)
        // Deleting what is already gone is not an error.
        try await store.save(nil)
        #expect(try await store.load() == nil)
        #expect(try await store.loadDeviceToken() == "device-token")
        #expect(try await store.loadInstallID() == "install-1")
        try await store.saveDeviceToken(nil)
        #expect(try await store.loadDeviceToken() == nil)
    }

    @Test func beforeTheFirstUnlockTheSessionIsOutOfReachAndSaysWhy() async throws {
        let store = KeychainTokenStore(service: "test.session")
        try await store.save(session)
        _SecurityShim.setBeforeFirstUnlock(true)
        await #expect(throws: KeyProviderError.keychain(errSecInteractionNotAllowed)) { try await store.load() }
        await #expect(throws: KeyProviderError.keychain(errSecInteractionNotAllowed)) { try await store.save(session) }
        _SecurityShim.setBeforeFirstUnlock(false)
        #expect(try await store.load() == session)
    }

    @Test func aRefusedAddIsAnErrorNotASilentLoss() async throws {
        let store = KeychainTokenStore(service: "test.session")
        // The update finds nothing; the add that follows is refused.
        _SecurityShim.failNextCalls(with: [errSecItemNotFound, errSecDuplicateItem])
        await #expect(throws: KeyProviderError.keychain(errSecDuplicateItem)) { try await store.save(session) }
    }

    @Test func theStoreKeyIsMadeOnceAndReadAfter() throws {
        let provider = KeychainKeyProvider(service: "test.store", account: "key")
        let key = try provider.loadOrCreateKey()
        let data = try #require(_SecurityShim.data(service: "test.store", account: "key"))
        #expect(data.count == 32)
        #expect(key.withUnsafeBytes { Data($0) } == data)
        #expect(try provider.loadOrCreateKey().withUnsafeBytes { Data($0) } == data)
        #expect(_SecurityShim.accessibility(service: "test.store", account: "key") == "cku")
    }

    @Test func aKeyAddedMeanwhileByAnotherProcessIsTheOneUsed() throws {
        let provider = KeychainKeyProvider(service: "test.store", account: "key")
        let theirs = Data(repeating: 7, count: 32)
        // Between our read (nothing) and our add, an extension of the app stores its key: ours is a duplicate.
        _SecurityShim.beforeNextAdd { _SecurityShim.insert(service: "test.store", account: "key", data: theirs) }
        let key = try provider.loadOrCreateKey()
        #expect(key.withUnsafeBytes { Data($0) } == theirs)
        #expect(_SecurityShim.itemCount == 1)
    }

    @Test func aKeyOfTheWrongSizeIsRefused() {
        _SecurityShim.insert(service: "test.store", account: "key", data: Data(repeating: 1, count: 16))
        let provider = KeychainKeyProvider(service: "test.store", account: "key")
        #expect(throws: KeyProviderError.malformedKey("the Keychain item test.store/key")) {
            try provider.loadOrCreateKey()
        }
    }

    @Test func beforeTheFirstUnlockNoNewKeyReplacesTheOneOutOfReach() throws {
        let provider = KeychainKeyProvider(service: "test.store", account: "key")
        let key = try provider.loadOrCreateKey().withUnsafeBytes { Data($0) }
        _SecurityShim.setBeforeFirstUnlock(true)
        #expect(throws: KeyProviderError.keychain(errSecInteractionNotAllowed)) { try provider.loadOrCreateKey() }
        _SecurityShim.setBeforeFirstUnlock(false)
        #expect(try provider.loadOrCreateKey().withUnsafeBytes { Data($0) } == key)
    }

    @Test func destroyingTheKeyDeletesTheItemOnce() throws {
        let provider = KeychainKeyProvider(service: "test.store", account: "key")
        _ = try provider.loadOrCreateKey()
        try provider.destroyKey()
        try provider.destroyKey()
        #expect(_SecurityShim.itemCount == 0)
        _SecurityShim.failNextCalls(with: [errSecInteractionNotAllowed])
        #expect(throws: KeyProviderError.keychain(errSecInteractionNotAllowed)) { try provider.destroyKey() }
    }

    @Test func theLocalStoreKeepsItsKeyInTheKeychainOnApplePlatforms() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        _ = try LocalStore(path: path)
        #expect(_SecurityShim.data(service: "dev.fitbase.local-store", account: path)?.count == 32)
        #expect(!FileManager.default.fileExists(atPath: path + ".key"))
    }
}
