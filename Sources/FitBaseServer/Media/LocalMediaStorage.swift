import Foundation
import NIOCore
import NIOPosix
import _NIOFileSystem

/// Media in the data directory (the embedded default): each object a file at `<root>/<key>`, written to
/// `<root>/.incoming/` first and renamed into place once complete, so a failed or cut-off upload leaves nothing.
struct LocalMediaStorage: MediaStorage {
    /// The directory holding the objects (`<data dir>/media`).
    let root: String
    private let fileSystem = FileSystem.shared
    private let threadPool = NIOThreadPool.singleton
    /// How much of a file one read hands on.
    private let chunkLength: Int64 = 256 * 1024

    var kind: String { "local" }

    /// A store in `root` (made absolute: listing compares the paths it walks with it).
    init(root: String) {
        self.root = URL(fileURLWithPath: root).standardizedFileURL.path
    }

    func put<Body: AsyncSequence & Sendable>(
        _ key: MediaKey, contentType: String, body: Body
    ) async throws -> StoredMedia where Body.Element == ByteBuffer {
        let incoming = root + "/.incoming"
        try await createDirectory(incoming)
        let temporary = incoming + "/" + UUID().uuidString
        do {
            let size = try await fileSystem.withFileHandle(
                forWritingAt: FilePath(temporary), options: .newFile(replaceExisting: false, permissions: [.ownerReadWrite])
            ) { handle in
                try await handle.withBufferedWriter { writer in
                    var size: Int64 = 0
                    for try await chunk in body {
                        size += Int64(chunk.readableBytes)
                        _ = try await writer.write(contentsOf: chunk)
                    }
                    return size
                }
            }
            let destination = path(of: key)
            try await createDirectory(String(destination[..<(destination.lastIndex(of: "/") ?? destination.endIndex)]))
            try await threadPool.runIfActive {
                guard rename(temporary, destination) == 0 else {
                    throw MediaStorageError.storeFailed("cannot move an upload into place: \(String(cString: strerror(errno)))")
                }
            }
            return StoredMedia(key: key, size: size)
        } catch {
            try? await threadPool.runIfActive { _ = unlink(temporary) }
            throw error
        }
    }

    func get(_ key: MediaKey, range: MediaByteRange?) async throws -> MediaContent? {
        let path = path(of: key)
        guard let info = try await fileSystem.info(forFileAt: FilePath(path)), info.type == .regular else { return nil }
        let size = info.size
        let bytes: ClosedRange<Int64>?
        if let range {
            guard let resolved = range.resolved(size: size) else { throw MediaStorageError.rangeNotSatisfiable(size: size) }
            bytes = resolved
        } else {
            bytes = size > 0 ? 0...(size - 1) : nil
        }
        let chunkLength = chunkLength
        let fileSystem = fileSystem
        return MediaContent(size: size, range: bytes, contentType: key.contentType) { consume in
            guard let bytes else { return }
            try await fileSystem.withFileHandle(forReadingAt: FilePath(path)) { handle in
                for try await chunk in handle.readChunks(in: bytes.lowerBound..<(bytes.upperBound + 1), chunkLength: .bytes(chunkLength)) {
                    try await consume(chunk)
                }
            }
        }
    }

    func delete(_ key: MediaKey) async throws {
        let path = path(of: key)
        try await threadPool.runIfActive {
            guard unlink(path) == 0 || errno == ENOENT else {
                throw MediaStorageError.storeFailed("cannot delete \(key): \(String(cString: strerror(errno)))")
            }
        }
    }

    func list(prefix: String) async throws -> [StoredMedia] {
        let root = root
        return try await threadPool.runIfActive {
            // Only the directory the prefix ends in (or the root) is walked.
            let directory = prefix.lastIndex(of: "/").map { String(prefix[..<$0]) } ?? ""
            let start = directory.isEmpty ? root : root + "/" + directory
            guard let walker = FileManager.default.enumerator(
                at: URL(fileURLWithPath: start), includingPropertiesForKeys: [.isRegularFileKey, .fileSizeKey]
            ) else { return [] }
            var found: [StoredMedia] = []
            for case let url as URL in walker {
                let values = try url.resourceValues(forKeys: [.isRegularFileKey, .fileSizeKey])
                guard values.isRegularFile == true else { continue }
                let relative = String(url.standardizedFileURL.path.dropFirst(root.count + 1))
                guard relative.hasPrefix(prefix), !relative.hasPrefix(".incoming/"), let key = MediaKey(relative) else { continue }
                found.append(StoredMedia(key: key, size: Int64(values.fileSize ?? 0)))
            }
            return found.sorted { $0.key < $1.key }
        }
    }

    func presignedURL(for key: MediaKey, expires: Duration, now: Date) -> String? { nil }

    /// Uploads begun but never finished (a crash mid-write); removed at start.
    func removeAbandonedUploads() async throws {
        let incoming = root + "/.incoming"
        try await threadPool.runIfActive {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: incoming)) ?? [] {
                _ = unlink(incoming + "/" + name)
            }
        }
    }

    private func path(of key: MediaKey) -> String {
        root + "/" + key.path
    }

    private func createDirectory(_ path: String) async throws {
        try await threadPool.runIfActive {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
    }
}
