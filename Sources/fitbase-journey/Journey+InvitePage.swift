import FitBaseClient
import FitBaseKit
import Foundation
import HTTPTypes
import OpenAPIRuntime

extension Journey {
    /// A friend without the app taps the shared link: a plain GET of exactly the URL the share sheet sends answers the
    /// server's HTML page, which names the group (HTML-escaped) and offers the app.
    static func invitePageLoads(_ invitation: GroupInvitation, groupName: String) async throws {
        let url = invitation.url
        var server = URLComponents(url: url, resolvingAgainstBaseURL: false)
        server?.path = ""
        let base = try require(server?.url, "the invite link \(url.absoluteString) names a server")
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: url.path, headerFields: [.accept: "text/html"])
        let (response, body) = try await FitBaseClient.defaultTransport().send(request, body: nil, baseURL: base, operationID: "getInvitePage")
        let html = try await String(collecting: body ?? HTTPBody(), upTo: 1 << 20)
        try check(response.status == .ok, "the invite page loads (\(response.status.code): \(html.prefix(200)))")
        try check(response.headerFields[.contentType]?.hasPrefix("text/html") == true, "the invite page is HTML (\(response.headerFields[.contentType] ?? "no type"))")
        let escaped = groupName.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "'", with: "&#39;")
        try check(html.contains("<strong>\(escaped)</strong>"), "the invite page names \(groupName), HTML-escaped")
        try check(html.contains("://group/invite/\(invitation.code)\""), "the invite page offers to open the app")
        step("A friend without the app opens the link in a browser: the page names \(groupName) and offers the app")
    }
}
