import FitBaseCore
import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import NIOCore

/// Renders the console's pages from the bundled `Templates/console-*.html.mustache` (swift-mustache: logic-less, every
/// value HTML-escaped unless a template says otherwise — only the server-drawn SVG charts are inserted raw) inside
/// `console-layout.html`, and serves the one stylesheet.
struct ConsoleRenderer: Sendable {
    private let library: MustacheLibrary
    let stylesheet: ByteBuffer
    let appName: String

    /// The console's sections, in the order of its navigation.
    static let sections: [(path: String, label: String)] = [
        ("/console", "Dashboard"), ("/console/users", "Users"), ("/console/catalog", "Catalog"), ("/console/groups", "Groups"),
        ("/console/deliveries", "Deliveries"), ("/console/config", "Config"), ("/console/reports", "Reports"), ("/console/system", "System"),
    ]

    /// Loads the bundled templates and stylesheet; a broken template stops start-up.
    static func load(appName: String) async throws -> ConsoleRenderer {
        guard let directory = Bundle.module.url(forResource: "Templates", withExtension: nil) else {
            throw TemplateError(name: "Templates", reason: "the resource folder is missing from the build")
        }
        let css = try Data(contentsOf: directory.appendingPathComponent("console.css"))
        return ConsoleRenderer(library: try await MustacheLibrary(directory: directory.path), stylesheet: ByteBuffer(bytes: css), appName: appName)
    }

    /// The page `name` (`console-<name>.html`) for `admin` (nil: signed out), its navigation marking `section`.
    func page(
        _ name: String, title: String, section: String? = nil, admin: ConsoleAdmin?, status: HTTPResponse.Status = .ok,
        _ values: [String: Any] = [:]
    ) throws -> Response {
        var context = values
        // `{{#usersAny}}…{{/usersAny}}` wraps a list's table, shown only when the list has items.
        for (key, value) in values {
            if let list = value as? [Any] { context[key + "Any"] = !list.isEmpty }
        }
        context["title"] = title
        context["appName"] = appName
        if let admin {
            context["signedIn"] = true
            context["adminEmail"] = admin.email ?? admin.user.description
            context["csrf"] = admin.csrfToken
            context["nav"] = Self.sections.map { item -> [String: Any] in
                ["href": item.path, "label": item.label, "current": item.path == section]
            }
        }
        guard let html = library.render(context, withTemplate: "console-\(name).html") else {
            throw TemplateError(name: "console-\(name).html", reason: "not found")
        }
        return Self.html(html, status: status)
    }

    /// An HTML response with the console's headers: never cached, never framed, no referrer, scripts only from here.
    static func html(_ html: String, status: HTTPResponse.Status = .ok) -> Response {
        var response = Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: html)))
        secure(&response)
        return response
    }

    /// A 303 to `location` (after a form, and to the sign-in page).
    static func redirect(_ location: String, cookies: [String] = []) -> Response {
        var response = Response(status: .seeOther, headers: [.location: location])
        for cookie in cookies { response.headers.append(HTTPField(name: .setCookie, value: cookie)) }
        secure(&response)
        return response
    }

    static func secure(_ response: inout Response) {
        response.headers[.cacheControl] = "no-store"
        response.headers[.referrerPolicy] = "same-origin"
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.contentSecurityPolicy] =
            "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }
}

extension HTTPField.Name {
    static let xContentTypeOptions = Self("X-Content-Type-Options")!
}

/// A short, readable instant for the console (UTC).
func consoleTime(_ date: Date?) -> String {
    guard let date else { return "—" }
    return date.formatted(.iso8601).replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
}
