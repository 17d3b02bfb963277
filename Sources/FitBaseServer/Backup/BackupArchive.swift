import Crypto
import Foundation

/// The container of a backup: a POSIX tar archive (ustar), so `tar tf backup.fitbase` lists it and `tar xf` unpacks it
/// without FitBase. Regular files only, written and read a megabyte at a time whatever their size (a size past ustar's
/// 8 GiB is written in the base-256 form GNU tar and bsdtar read).
enum BackupArchive {
    static let blockSize = 512
    static let chunkSize = 1 << 20

    /// Writes entries to a file, one after another.
    final class Writer {
        private let handle: FileHandle

        init(path: String) throws {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw BackupError("cannot create \(path)")
            }
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        }

        /// Adds `data` as the file `name`.
        func add(name: String, data: Data, modified: Date) throws {
            try handle.write(contentsOf: BackupArchive.header(name: name, size: UInt64(data.count), modified: modified))
            try handle.write(contentsOf: data)
            try handle.write(contentsOf: BackupArchive.padding(after: UInt64(data.count)))
        }

        /// Adds the file at `path` as `name`; returns its size and SHA-256 (hex).
        @discardableResult
        func add(name: String, copying path: String, modified: Date) throws -> (bytes: UInt64, sha256: String) {
            let size = try BackupArchive.size(of: path)
            try handle.write(contentsOf: BackupArchive.header(name: name, size: size, modified: modified))
            let source = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? source.close() }
            var hasher = SHA256()
            var copied: UInt64 = 0
            while let chunk = try source.read(upToCount: BackupArchive.chunkSize), !chunk.isEmpty {
                hasher.update(data: chunk)
                try handle.write(contentsOf: chunk)
                copied += UInt64(chunk.count)
            }
            guard copied == size else { throw BackupError("\(path) changed size while it was copied") }
            try handle.write(contentsOf: BackupArchive.padding(after: size))
            return (size, hasher.finalize().map { String(format: "%02x", $0) }.joined())
        }

        /// Writes the end-of-archive marker, flushes to disk and closes.
        func finish() throws {
            try handle.write(contentsOf: Data(count: 2 * BackupArchive.blockSize))
            try handle.synchronize()
            try handle.close()
        }

        func abandon() {
            try? handle.close()
        }
    }

    /// Reads entries in order.
    final class Reader {
        private let handle: FileHandle
        private let path: String

        init(path: String) throws {
            self.path = path
            do {
                handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            } catch {
                throw BackupError("cannot read \(path): \(error.localizedDescription)")
            }
        }

        deinit { try? handle.close() }

        /// The next entry's name and size, or `nil` at the end of the archive.
        func next() throws -> (name: String, size: UInt64)? {
            guard let header = try handle.read(upToCount: BackupArchive.blockSize), header.count == BackupArchive.blockSize else {
                throw BackupError("\(path) ends in the middle of an entry: not a complete backup")
            }
            if header.allSatisfy({ $0 == 0 }) { return nil }
            let bytes = [UInt8](header)
            guard Array(bytes[257..<262]) == Array("ustar".utf8) else { throw BackupError("\(path) is not a FitBase backup (not a tar archive)") }
            let stored = BackupArchive.octal(bytes[148..<156])
            var sum = 0
            for (index, byte) in bytes.enumerated() { sum += (148..<156).contains(index) ? 32 : Int(byte) }
            guard stored == UInt64(sum) else { throw BackupError("\(path) has a damaged entry header") }
            guard bytes[156] == UInt8(ascii: "0") || bytes[156] == 0 else { throw BackupError("\(path) holds an entry that is not a regular file") }
            let base = String(decoding: bytes[0..<100].prefix { $0 != 0 }, as: UTF8.self)
            // ustar keeps a long name's directories in the prefix field.
            let prefix = String(decoding: bytes[345..<500].prefix { $0 != 0 }, as: UTF8.self)
            let name = prefix.isEmpty ? base : prefix + "/" + base
            let size: UInt64
            if bytes[124] & 0x80 != 0 {
                size = bytes[125..<136].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            } else {
                size = BackupArchive.octal(bytes[124..<136])
            }
            return (name, size)
        }

        /// The current entry's bytes, whole (for the small manifest).
        func read(size: UInt64) throws -> Data {
            guard size <= 1 << 20 else { throw BackupError("\(path): the manifest is too large") }
            let data = try handle.read(upToCount: Int(size)) ?? Data()
            guard data.count == Int(size) else { throw BackupError("\(path) ends in the middle of an entry: not a complete backup") }
            try skipPadding(after: size)
            return data
        }

        /// Copies the current entry to a new file at `destination`; returns its SHA-256 (hex).
        func extract(size: UInt64, to destination: String) throws -> String {
            guard FileManager.default.createFile(atPath: destination, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw BackupError("cannot create \(destination)")
            }
            let output = try FileHandle(forWritingTo: URL(fileURLWithPath: destination))
            defer { try? output.close() }
            var hasher = SHA256()
            var remaining = size
            while remaining > 0 {
                guard let chunk = try handle.read(upToCount: Int(min(remaining, UInt64(BackupArchive.chunkSize)))), !chunk.isEmpty else {
                    throw BackupError("\(path) ends in the middle of an entry: not a complete backup")
                }
                hasher.update(data: chunk)
                try output.write(contentsOf: chunk)
                remaining -= UInt64(chunk.count)
            }
            try output.synchronize()
            try skipPadding(after: size)
            return hasher.finalize().map { String(format: "%02x", $0) }.joined()
        }

        /// Skips the current entry.
        func skip(size: UInt64) throws {
            let padded = (size + UInt64(BackupArchive.blockSize) - 1) / UInt64(BackupArchive.blockSize) * UInt64(BackupArchive.blockSize)
            try handle.seek(toOffset: try handle.offset() + padded)
        }

        private func skipPadding(after size: UInt64) throws {
            let count = BackupArchive.padding(after: size).count
            if count > 0 { _ = try handle.read(upToCount: count) }
        }
    }

    /// A ustar header for a regular file, owner-only.
    static func header(name: String, size: UInt64, modified: Date) throws -> Data {
        var nameBytes = Array(name.utf8)
        var prefixBytes: [UInt8] = []
        if nameBytes.count >= 100 {
            // Split at a `/` so that the directories fit ustar's prefix field (155) and the rest its name field (100).
            guard let slash = nameBytes.indices.last(where: { nameBytes[$0] == UInt8(ascii: "/") && $0 <= 155 && nameBytes.count - $0 - 1 < 100 && $0 > 0 })
            else { throw BackupError("entry name too long: \(name)") }
            prefixBytes = Array(nameBytes[..<slash])
            nameBytes = Array(nameBytes[(slash + 1)...])
        }
        var block = [UInt8](repeating: 0, count: blockSize)
        func put(_ bytes: [UInt8], at offset: Int) { for (index, byte) in bytes.enumerated() { block[offset + index] = byte } }
        func octal(_ value: UInt64, width: Int) -> [UInt8] {
            Array(String(value, radix: 8).leftPadded(to: width - 1).utf8) + [0]
        }
        put(nameBytes, at: 0)
        put(octal(0o600, width: 8), at: 100)
        put(octal(0, width: 8), at: 108)
        put(octal(0, width: 8), at: 116)
        if size < 0o77777777777 {
            put(octal(size, width: 12), at: 124)
        } else {
            block[124] = 0x80
            for index in 0..<11 { block[135 - index] = UInt8(truncatingIfNeeded: size >> (8 * UInt64(index))) }
        }
        put(octal(UInt64(max(0, modified.timeIntervalSince1970)), width: 12), at: 136)
        put(Array(repeating: 32, count: 8), at: 148)
        block[156] = UInt8(ascii: "0")
        put(Array("ustar".utf8) + [0], at: 257)
        put(Array("00".utf8), at: 263)
        put(Array("fitbase".utf8), at: 265)
        put(Array("fitbase".utf8), at: 297)
        put(prefixBytes, at: 345)
        let sum = block.reduce(0) { $0 + Int($1) }
        put(Array(String(sum, radix: 8).leftPadded(to: 6).utf8) + [0, 32], at: 148)
        return Data(block)
    }

    static func padding(after size: UInt64) -> Data {
        let remainder = Int(size % UInt64(blockSize))
        return Data(count: remainder == 0 ? 0 : blockSize - remainder)
    }

    static func size(of path: String) throws -> UInt64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.size] as? NSNumber)?.uint64Value ?? 0
    }

    /// An octal field (digits, then NULs or spaces).
    static func octal(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var value: UInt64 = 0
        for byte in bytes {
            guard (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(byte) else {
                if byte == 0 || byte == 32 { if value > 0 { break } else { continue } }
                break
            }
            value = value * 8 + UInt64(byte - UInt8(ascii: "0"))
        }
        return value
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// A backup or a restore that cannot be done, said in one sentence.
public struct BackupError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
