import FitBaseCore
import Foundation
import NIOCore
import SQLKit

/// A user's media in export and deletion. The export's `profilePhoto` section is `null` or the photo with its bytes
/// (base64, written as they are read from the store). Deletion removes every object under the user's prefix — listed
/// from the store, so an object a failed replacement left behind goes too — before the final transaction removes the
/// row; run again after an interruption, it finds what is left.
struct ProfilePhotoOwner: BulkAccountDataOwner {
    let store: ProfilePhotoStore
    let storage: any MediaStorage

    var section: String { "profilePhoto" }

    func writeExport(_ user: UserID, database: Database, to write: ExportWriter) async throws {
        guard let photo = try await store.photo(of: user), let content = try await storage.get(photo.key, range: nil) else {
            try await write(ByteBuffer(string: "null"))
            return
        }
        // Keys sorted, as in the rest of the export.
        try await write(ByteBuffer(string: #"{"bytes":\#(photo.bytes),"contentType":"\#(photo.format.contentType)","data":""#))
        var pending: [UInt8] = []
        try await content.read { chunk in
            pending.append(contentsOf: chunk.readableBytesView)
            // Whole groups of three bytes encode without padding.
            let whole = pending.count - pending.count % 3
            guard whole > 0 else { return }
            try await write(ByteBuffer(string: Data(pending[..<whole]).base64EncodedString()))
            pending.removeFirst(whole)
        }
        try await write(ByteBuffer(string: Data(pending).base64EncodedString() + "\""))
        let updatedAt = InternetDateTime.string(from: photo.updatedAt)
        try await write(
            ByteBuffer(string: #","height":\#(photo.height),"updatedAt":"\#(updatedAt)","version":\#(photo.version),"width":\#(photo.width)}"#))
    }

    func deleteInBatches(_ user: UserID, database: Database) async throws {
        try await storage.deleteAll(prefix: ProfilePhoto.prefix(of: user))
    }

    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await ProfilePhotoStore.remove(user, on: db)
    }
}
