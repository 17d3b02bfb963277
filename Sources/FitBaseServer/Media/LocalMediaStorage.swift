import Foundation
#if canImport(Glibc)
import Glibc
#endif
// `stat`'s fields: the compiler finds them through one of these two (CDispatch in debug builds, CoreFoundation in
// release builds here) and wants that module imported.
#if canImport(CDispatch)
import CDispatch
#endif
#if canImport(CoreFoundation)
import CoreFoundation
#endif
import NIOCore
import NIOPosix
import Synchronization
import _NIOFileSystem

/// Media in the data directory (the embedded default): each object a file at `<root>/<key>`, written to
/// `<root>/.incoming/` first and renamed into place once complete, so a failed or cut-off upload leaves nothing.
struct LocalMediaStorage: MediaStorage {
    /// The directory holding the objects (`<data dir>/media`).
    let root: String
    private let fileSystem = FileSystem.shared
    private let threadPool = NIOThreadPool.singleton
    /// How much of a file one read hands on (the next is read while this one is written).
    private let chunkLength: Int64 = 1024 * 1024

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
        // Opened and measured in one hop; the descriptor is read from or sent, and closed, by whoever takes it.
        guard let opened = try await threadPool.runIfActive({ try Self.openRegularFile(path) }) else { return nil }
        return try content(of: key, opened: opened, range: range)
    }

    /// ``get(_:range:)`` on the calling thread (``MediaLinkRoute``, on its event loop, as nginx opens the
    /// files it sends: an `open` and an `fstat` in the data directory).
    func getBlocking(_ key: MediaKey, range: MediaByteRange?) throws -> MediaContent? {
        try Self.openRegularFile(path(of: key)).map { try content(of: key, opened: $0, range: range) }
    }

    /// Opens the regular file at `path` and reads its size (blocking: run on the thread pool); nil when there is none.
    private static func openRegularFile(_ path: String) throws -> (file: OpenedFile, size: Int64)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw MediaStorageError.storeFailed("cannot open a stored file: \(String(cString: strerror(errno)))")
        }
        let file = OpenedFile(fd)
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw MediaStorageError.storeFailed("cannot read a stored file's size") }
        guard status.st_mode & S_IFMT == S_IFREG else { return nil }
        return (file, Int64(status.st_size))
    }

    /// The content of `key`'s file, opened, for `range`; throws ``MediaStorageError/rangeNotSatisfiable(size:)``.
    private func content(of key: MediaKey, opened: (file: OpenedFile, size: Int64), range: MediaByteRange?) throws -> MediaContent {
        let path = path(of: key), file = opened.file, size = opened.size
        let bytes: ClosedRange<Int64>?
        if let range {
            guard let resolved = range.resolved(size: size) else { throw MediaStorageError.rangeNotSatisfiable(size: size) }
            bytes = resolved
        } else {
            bytes = size > 0 ? 0...(size - 1) : nil
        }
        let reader = FileRangeReader(path: path, threadPool: threadPool, chunkLength: Int(chunkLength))
        return MediaContent(size: size, range: bytes, contentType: key.contentType, read: { consume in
            guard let bytes else { return }
            try await reader.read(bytes, from: file, consume: consume)
        }, localFile: LocalFile(path: path, opened: file))
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

/// Reads a byte range of a file through the thread pool in few hops: the file is opened with the first chunk's read and
/// closed with the last one's, and while one chunk is being written the next is read (so a 1 MiB range, what a player
/// asks for while seeking, costs one hop; a long stream keeps at most two chunks in memory). A file that ends before
/// the range does (replaced or cut short since its size was read) fails the read rather than sending fewer bytes than
/// the `Content-Length` promised.
struct FileRangeReader: Sendable {
    let path: String
    let threadPool: NIOThreadPool
    let chunkLength: Int

    /// An open descriptor, handed between the hops that use it (one at a time).
    private struct Descriptor: @unchecked Sendable { var fd: CInt }

    /// Reads `bytes`, starting with `file`'s descriptor when nobody took it yet (the file is opened again otherwise).
    func read(_ bytes: ClosedRange<Int64>, from file: OpenedFile? = nil, consume: (ByteBuffer) async throws -> Void) async throws {
        let end = bytes.upperBound + 1
        let path = path, chunkLength = chunkLength, threadPool = threadPool
        // One hop: open (if not yet), read a chunk, close when it is the last one or on failure.
        @Sendable func hop(_ descriptor: Descriptor?, offset: Int64) async throws -> (Descriptor?, ByteBuffer) {
            try await threadPool.runIfActive {
                var fd = descriptor?.fd ?? -1
                if fd < 0 {
                    fd = open(path, O_RDONLY | O_CLOEXEC)
                    guard fd >= 0 else { throw MediaStorageError.storeFailed("cannot open a stored file: \(String(cString: strerror(errno)))") }
                }
                let length = Int(min(Int64(chunkLength), end - offset))
                var buffer = ByteBufferAllocator().buffer(capacity: length)
                do {
                    try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: length) { raw in
                        var done = 0
                        while done < length {
                            let count = pread(fd, raw.baseAddress! + done, length - done, off_t(offset) + off_t(done))
                            if count < 0, errno == EINTR { continue }
                            guard count > 0 else {
                                throw MediaStorageError.storeFailed(
                                    count < 0 ? "cannot read a stored file: \(String(cString: strerror(errno)))" : "a stored file ended early")
                            }
                            done += count
                        }
                        return done
                    }
                } catch {
                    close(fd)
                    throw error
                }
                if offset + Int64(length) >= end {
                    close(fd)
                    return (nil, buffer)
                }
                return (Descriptor(fd: fd), buffer)
            }
        }
        var offset = bytes.lowerBound
        var (descriptor, chunk) = try await hop(file?.take().map(Descriptor.init(fd:)), offset: offset)
        offset += Int64(chunk.readableBytes)
        while let open = descriptor {
            // The next chunk is read while this one is written; the descriptor is closed by the last read, or here
            // once the read in flight is over when writing fails.
            let at = offset
            let next = Task { try await hop(open, offset: at) }
            do {
                try await consume(chunk)
            } catch {
                if let (left, _) = try? await next.value, let left { try? await threadPool.runIfActive { _ = close(left.fd) } }
                throw error
            }
            (descriptor, chunk) = try await next.value
            offset += Int64(chunk.readableBytes)
        }
        try await consume(chunk)
    }
}

/// A descriptor opened for a read that has not started: whoever takes it closes it; if nobody does (the answer was
/// never written), it is closed when the last reference goes.
final class OpenedFile: Sendable {
    private let descriptor: Mutex<CInt>

    init(_ fd: CInt) {
        descriptor = Mutex(fd)
    }

    /// The descriptor, once; nil after that.
    func take() -> CInt? {
        descriptor.withLock { fd in
            defer { fd = -1 }
            return fd >= 0 ? fd : nil
        }
    }

    deinit {
        if let fd = take() { close(fd) }
    }
}

/// A stored object that is a file on this machine: its path, and the descriptor its read opened.
struct LocalFile: Sendable {
    let path: String
    let opened: OpenedFile
}
