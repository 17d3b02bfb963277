import Foundation
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// Bodies sent straight from a file by the kernel (`sendfile`), never copied through the server's memory: media kept in
/// the data directory (a seeking player's byte ranges) go out at the disk's pace, as nginx sends them.
///
/// Hummingbird's response writer takes only `ByteBuffer`s; NIO's HTTP/1 encoder below it also takes a `FileRegion`. So
/// each connection gets a ``FileRegionHandler`` next to that encoder, and a route that sends a file hands the open file
/// to its connection's handler and writes, as the body, a 24-byte marker naming it: the handler swaps the marker for the
/// file region. A marker is a secret made at start (never sent anywhere) and the file's number on that connection, so
/// no other body can be taken for one. A server run without the handler (the router tests) sends the file through
/// memory, as before.
enum FileRegionResponses {
    /// The handlers of open connections, by their channel.
    fileprivate static let handlers = Mutex<[ObjectIdentifier: FileRegionHandler]>([:])

    /// Sixteen random bytes, the start of every marker this process writes.
    fileprivate static let secret: [UInt8] = {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }()

    fileprivate static let markerLength = 24

    /// The installer Hummingbird's HTTP/1 channel adds after its own handlers (``FileRegionInstaller``); with `ahead`,
    /// each connection also answers those routes ahead of the router (``AheadChannelHandler``).
    static func channelHandlers(ahead: AheadRoutes?) -> [any RemovableChannelHandler] {
        [FileRegionInstaller(ahead: ahead)]
    }

    /// The handler of `channel` when it sends files itself (a live connection); nil otherwise.
    static func handler(of channel: (any Channel)?) -> FileRegionHandler? {
        guard let channel else { return nil }
        return handlers.withLock { $0[ObjectIdentifier(channel)] }
    }

    /// Sends `bytes` of the stored file (the descriptor its read opened, or the file opened again when that was taken)
    /// through `handler`, the connection's, as the rest of the body written by `writer`, and finishes the body. Throws
    /// ``MediaStorageError`` when the file cannot be opened or is shorter than the range (nothing is sent then; the
    /// connection is closed, as with a failed read).
    static func send(
        _ stored: LocalFile, bytes: ClosedRange<Int64>, through handler: FileRegionHandler, writer: inout any ResponseBodyWriter
    ) async throws {
        let descriptor: CInt
        if let opened = stored.opened.take() {
            descriptor = opened
        } else {
            // Taken already (read once before): opened again, and checked to still reach the range.
            let path = stored.path
            descriptor = try await NIOThreadPool.singleton.runIfActive { () throws -> CInt in
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { throw MediaStorageError.storeFailed("cannot open a stored file: \(String(cString: strerror(errno)))") }
                guard Int64(lseek(fd, 0, SEEK_END)) > bytes.upperBound else {
                    close(fd)
                    throw MediaStorageError.storeFailed("a stored file ended early")
                }
                return fd
            }
        }
        let (marker, number) = handler.hold(descriptor, bytes: bytes)
        do {
            try await writer.write(marker)
        } catch {
            // Not taken by the handler (the connection went away first): closed here.
            handler.release(number)
            throw error
        }
        try await writer.finish(nil)
    }

    /// A file held for the connection until its marker passes.
    struct PendingFile: @unchecked Sendable {
        let handle: NIOFileHandle
        let range: ClosedRange<Int64>
    }

    /// Sits after NIO's HTTP/1 response encoder (where bodies are `IOData`) and swaps a marker body for its file.
    final class FileRegionHandler: ChannelOutboundHandler, RemovableChannelHandler, Sendable {
        typealias OutboundIn = HTTPServerResponsePart
        typealias OutboundOut = HTTPServerResponsePart

        private let pending = Mutex<(next: UInt64, files: [UInt64: PendingFile])>((0, [:]))
        private let channel = Mutex<ObjectIdentifier?>(nil)

        /// Takes `descriptor` (closed once sent, or when the connection goes away) for `bytes` of its file, and returns
        /// the body that sends them and its number.
        func hold(_ descriptor: CInt, bytes: ClosedRange<Int64>) -> (marker: ByteBuffer, number: UInt64) {
            let file = PendingFile(handle: NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: descriptor), range: bytes)
            let number = pending.withLock { state in
                state.next += 1
                state.files[state.next] = file
                return state.next
            }
            var marker = ByteBuffer()
            marker.reserveCapacity(FileRegionResponses.markerLength)
            marker.writeBytes(FileRegionResponses.secret)
            marker.writeInteger(number)
            return (marker, number)
        }

        /// Closes the file numbered `number` unless the handler took it.
        func release(_ number: UInt64) {
            if let file = pending.withLock({ $0.files.removeValue(forKey: number) }) { try? file.handle.close() }
        }

        func handlerAdded(context: ChannelHandlerContext) {
            let id = ObjectIdentifier(context.channel)
            channel.withLock { $0 = id }
            FileRegionResponses.handlers.withLock { $0[id] = self }
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            if let id = channel.withLock({ $0 }) { _ = FileRegionResponses.handlers.withLock { $0.removeValue(forKey: id) } }
            let left = pending.withLock { state in
                defer { state.files = [:] }
                return Array(state.files.values)
            }
            for file in left { try? file.handle.close() }
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            guard case .body(.byteBuffer(let body)) = unwrapOutboundIn(data), let number = Self.number(ofMarker: body),
                let file = pending.withLock({ $0.files.removeValue(forKey: number) })
            else {
                context.write(data, promise: promise)
                return
            }
            let region = FileRegion(fileHandle: file.handle, readerIndex: Int(file.range.lowerBound), endIndex: Int(file.range.upperBound) + 1)
            let written = promise ?? context.eventLoop.makePromise()
            written.futureResult.whenComplete { _ in try? file.handle.close() }
            context.write(wrapOutboundOut(.body(.fileRegion(region))), promise: written)
        }

        /// The file number a marker body carries; nil for any other body.
        private static func number(ofMarker body: ByteBuffer) -> UInt64? {
            guard body.readableBytes == FileRegionResponses.markerLength else { return nil }
            let matches = body.withUnsafeReadableBytes { bytes in bytes.prefix(16).elementsEqual(FileRegionResponses.secret) }
            return matches ? body.getInteger(at: body.readerIndex + 16, as: UInt64.self) : nil
        }
    }
}

/// The routes each connection answers ahead of the router (``AheadChannelHandler``), and what their answers carry of
/// the router's middleware.
struct AheadRoutes: Sendable {
    let fields: AheadAnswerFields
    /// Media links, given the connection's file region handler.
    let media: (@Sendable (FileRegionResponses.FileRegionHandler) -> MediaLinkRoute)?
    let catalog: CatalogAheadRoute?
}

/// Added by Hummingbird after its HTTP/1 handlers: puts a ``FileRegionResponses/FileRegionHandler`` right after NIO's
/// response encoder, where bodies may be files, and, with routes to answer ahead, their ``AheadChannelHandler``s right
/// before the application (after Hummingbird's connection state handler, which is added after this one: so on the
/// connection's first read, when the pipeline is whole); then takes itself out.
private final class FileRegionInstaller: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private let ahead: AheadRoutes?
    private var files: FileRegionResponses.FileRegionHandler?

    init(ahead: AheadRoutes?) {
        self.ahead = ahead
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let operations = context.pipeline.syncOperations
        if let encoder = try? operations.handler(type: HTTPResponseEncoder.self) {
            let files = FileRegionResponses.FileRegionHandler()
            if (try? operations.addHandler(files, position: .after(encoder))) != nil { self.files = files }
        }
        if ahead == nil { operations.removeHandler(context: context, promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let operations = context.pipeline.syncOperations
        if let ahead, let connection = try? operations.handler(type: HTTPConnectionStateHandler.self) {
            // Each added right after the connection's handler: the last added comes first.
            if let catalog = ahead.catalog {
                try? operations.addHandler(AheadChannelHandler(route: catalog, fields: ahead.fields), position: .after(connection))
            }
            if let media = ahead.media, let files {
                try? operations.addHandler(AheadChannelHandler(route: media(files), fields: ahead.fields), position: .after(connection))
            }
        }
        context.fireChannelRead(data)
        operations.removeHandler(context: context, promise: nil)
    }
}
