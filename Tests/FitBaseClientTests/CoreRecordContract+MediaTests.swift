import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation
import Testing

/// A stored profile photo is Core's ``ProfilePhotoInfo`` in the contract's JSON, read from an upload's answer whole.
@Suite struct CoreRecordContractMediaTests {
    @Test func aStoredPhotoIsTheContractsProfilePhoto() throws {
        let photo = ProfilePhotoInfo(
            version: 3, digest: String(repeating: "ab", count: 32), contentType: "image/jpeg", width: 1_024, height: 768, bytes: 181_000,
            updatedAt: CoreRecordContractTests.instant)
        let wire = try CoreRecordContractTests.roundTrip(photo, as: Components.Schemas.ProfilePhoto.self)
        #expect(wire.version == 3 && wire.contentType == "image/jpeg" && wire.width == 1_024 && wire.bytes == 181_000)
        #expect(try ContractJSON.record(ProfilePhotoInfo.self, from: wire) == photo)
    }
}
