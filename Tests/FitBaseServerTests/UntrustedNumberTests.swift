import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import FitBaseServer

/// Numbers a client declares, played over HTTP at their extremes: a media link's `Range` and a list's cursor. Each
/// is answered (the whole object, a 416, a 400 naming the parameter), never by a trap that would stop the server.
@Suite struct UntrustedNumberTests {
    /// `Range` values whose numbers reach or pass `Int64`'s bounds, or ask for a last byte before the first: each
    /// answered with the whole object or a 416.
    static let hostileRanges = [
        "bytes=9223372036854775807-", "bytes=-9223372036854775808", "bytes=5-2", "bytes=0-9223372036854775807",
        "bytes=-999999999999999999", "bytes=999999999999999999-", "bytes=99999999999999999999999999-1",
        "bytes=-0", "bytes=+5-9", "bytes=0-0,1-1",
    ]

    @Test(arguments: TestEngines.all)
    func aMediaLinkAnswersAHostileRangeWithTheWholeObjectOrA416(engine: DatabaseEngine) async throws {
        try await MediaLinkChannelTests.withLinkedVideo(engine) { client, _, path, video in
            let port = try #require(client.port)
            for range in Self.hostileRanges {
                // The first answered on the event loop (or handed to the router), the second by the router.
                let request = "GET \(path) HTTP/1.1\r\nHost: localhost\r\nRange: \(range)\r\n"
                let answers = try await MediaLinkChannelTests.exchange(
                    port: port, request + "\r\n" + request + "Connection: close\r\n\r\n")
                try #require(answers.count == 2, "\(range)")
                for answer in answers {
                    if answer.status == 416 {
                        #expect(answer.field("content-range") == "bytes */\(video.count)", "\(range)")
                    } else {
                        // The header ignored (200), or a suffix longer than the object: all of it (206).
                        #expect(answer.status == 200 || answer.status == 206, "\(range)")
                        #expect(answer.body == video, "\(range)")
                    }
                }
            }
            // Still serving.
            let after = try await MediaLinkChannelTests.exchange(
                port: port, "GET \(path) HTTP/1.1\r\nHost: localhost\r\nRange: bytes=0-9\r\nConnection: close\r\n\r\n")
            #expect(after.first?.status == 206)
            #expect(after.first?.body == Array(video[0...9]))
        }
    }

    /// A cursor as a list writes one, around any position.
    static func cursor(_ position: String) -> String {
        Data(position.utf8).base64URLEncoded
    }

    @Test(arguments: TestEngines.all)
    func aCursorPastAnyListIsRefusedNamingIt(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let token = try await client.signUp().accessToken
            // `offset + limit` of an `Int.max` offset overflowed: the fertility signals list added them on every page.
            let positions = ["offset:9223372036854775807", "offset:9223372036854775800", "offset:1099511627777"]
            for position in positions + ["offset:-1", "offset:+5"] {
                for list in ["/v1/cycle/signals", "/v1/workouts", "/v1/plans", "/v1/notifications", "/v1/history"] {
                    let response = try await client.json(.get, "\(list)?cursor=\(Self.cursor(position))", token: token)
                    #expect(response.status == .badRequest, "\(list) \(position): \(String(buffer: response.body))")
                    let errors = try json(response)["errors"] as? [[String: Any]]
                    let fields = errors?.compactMap { $0["field"] as? String }
                    #expect(fields == ["cursor"], "\(list) \(position)")
                }
            }
            for position in ["seq:9223372036854775807", "seq:1099511627777"] {
                let response = try await client.json(
                    .get, "/v1/sync/changes?since=\(Self.cursor(position))", token: token)
                #expect(response.status == .badRequest, "\(position): \(String(buffer: response.body))")
                #expect((try json(response)["errors"] as? [[String: Any]])?.first?["field"] as? String == "since")
            }
            // The largest position a cursor may carry is read as before.
            let largestCursor = Self.cursor("offset:\(PageCursor.maximumPosition)")
            let largest = try await client.json(.get, "/v1/cycle/signals?cursor=\(largestCursor)", token: token)
            #expect(largest.status == .ok, "\(String(buffer: largest.body))")
        }
    }
}
