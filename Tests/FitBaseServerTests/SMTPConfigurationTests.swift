import Foundation
import NIOSSL
import Testing

@testable import FitBaseServer

@Suite struct SMTPConfigurationTests {
    private func resolve(_ url: String?, from: String? = "FitBase <no-reply@fitbase.test>", caFile: String? = nil) throws(ConfigurationError)
        -> SMTPConfiguration?
    {
        var environment: [String: String] = [:]
        environment["FITBASE_SMTP_URL"] = url
        environment["FITBASE_MAIL_FROM"] = from
        environment["FITBASE_SMTP_CA_FILE"] = caFile
        return try SMTPConfiguration.resolve(environment: environment)
    }

    @Test func isOffWithoutAURL() throws {
        #expect(try resolve(nil) == nil)
        #expect(try resolve("  ") == nil)
    }

    @Test func readsEachForm() throws {
        let submission = try #require(try resolve("smtp://mailer:s3cret@smtp.example.com"))
        #expect(submission.host == "smtp.example.com")
        #expect(submission.port == 587)
        #expect(submission.security == .startTLS)
        #expect(submission.credentials == .init(user: "mailer", password: "s3cret"))
        #expect(submission.sender == "FitBase <no-reply@fitbase.test>")
        #expect(submission.additionalTrustRoots.isEmpty)

        let implicit = try #require(try resolve("SMTPS://mailer:s3cret@smtp.example.com"))
        #expect(implicit.port == 465)
        #expect(implicit.security == .implicitTLS)

        #expect(try resolve("smtp://relay.internal:25?tls=optional")?.security == .startTLSWhenOffered)
        #expect(try resolve("smtp://relay.internal:25?tls=optional")?.port == 25)
        #expect(try resolve("smtp://relay.internal:2525?tls=required")?.security == .startTLS)
        let relay = try #require(try resolve("smtp://127.0.0.1:25/?tls=none"))
        #expect(relay.security == .none)
        #expect(relay.credentials == nil)
        #expect(try resolve("smtp://[::1]:25?tls=none")?.host == "::1")
    }

    @Test func percentDecodesTheUserAndPassword() throws {
        let configuration = try #require(try resolve("smtp://mailer%40example.com:p%40ss%3Aw%2Frd%20x@smtp.example.com:587"))
        #expect(configuration.credentials == .init(user: "mailer@example.com", password: "p@ss:w/rd x"))
    }

    @Test(arguments: [
        ("http://smtp.example.com", "smtp:// or smtps://"),
        ("smtp.example.com:587", "smtp:// or smtps://"),
        ("smtp://smtp.example.com:0", "a port from 1 to 65535"),
        ("smtp://smtp.example.com:70000", "a port from 1 to 65535"),
        ("smtp://smtp.example.com:abc", "a URL such as"),
        ("smtp://", "a host"),
        ("smtp://smtp.example.com?tls=maybe", "tls=required, tls=optional or tls=none"),
        ("smtp://smtp.example.com?starttls=optional", "at most one query parameter"),
        ("smtps://smtp.example.com?tls=none", "no tls parameter with smtps://"),
        ("smtp://mailer@smtp.example.com", "both a user and a password"),
        ("smtp://smtp.example.com/inbox", "no path"),
    ])
    func rejectsABadURL(url: String, expected: String) {
        #expect {
            try resolve(url)
        } throws: { error in
            let error = error as! ConfigurationError
            return error.source == "FITBASE_SMTP_URL" && error.expected.contains(expected) && "\(error)".contains("FITBASE_SMTP_URL")
        }
    }

    @Test(arguments: [
        "smtp://mailer:Hunter2Secret@smtp.example.com:99999",
        "smtp://mailer:Hunter2Secret@smtp.example.com/path",
        "smtp://mailer:Hunter2 Secret@smtp.example.com?tls=bogus",
        "smtp://mailer:Hunter2Secret@with@at@smtp.example.com:0",
        "ftp://mailer:Hunter2Secret@smtp.example.com",
    ])
    func neverShowsThePasswordInAnError(url: String) {
        #expect {
            try resolve(url)
        } throws: { error in
            let text = "\(error)"
            return text.contains("FITBASE_SMTP_URL") && !text.contains("Hunter2") && text.contains("mailer:***@")
        }
    }

    @Test func neverShowsThePasswordWhenPrinted() throws {
        let configuration = try #require(try resolve("smtp://mailer:Hunter2Secret@smtp.example.com"))
        #expect(!"\(configuration)".contains("Hunter2"))
    }

    @Test(arguments: [nil, "", "not an address", "FitBase <no-reply>", "a@b.example\r\nBcc: x@y.example", "FitBase <no-reply@fitbase.test"])
    func rejectsABadSender(from: String?) {
        #expect {
            try resolve("smtp://smtp.example.com", from: from)
        } throws: { error in
            (error as? ConfigurationError)?.source == "FITBASE_MAIL_FROM"
        }
    }

    @Test(arguments: [
        "no-reply@fitbase.test", "<no-reply@fitbase.test>", "\"FitBase, Inc.\" <no-reply@fitbase.test>", "Fit Bäse <a.b+c@x-y.example>",
    ])
    func acceptsASender(from: String) throws {
        #expect(try resolve("smtp://smtp.example.com", from: from)?.sender == from)
    }

    @Test func trustsTheCertificatesOfACAFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("smtp-ca-\(UUID().uuidString).pem")
        defer { try? FileManager.default.removeItem(at: file) }
        try SMTPTestCertificates().rootPEM.write(to: file, atomically: true, encoding: .utf8)

        #expect(try resolve("smtp://smtp.example.com", caFile: file.path)?.additionalTrustRoots.count == 1)
        #expect {
            try resolve("smtp://smtp.example.com", caFile: "/nonexistent/ca.pem")
        } throws: { error in
            (error as? ConfigurationError)?.source == "FITBASE_SMTP_CA_FILE"
        }
    }
}
