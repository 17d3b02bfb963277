import FitBaseCore
import Foundation

/// The RFC 5322 text of one ``MailMessage``: headers, then a `multipart/alternative` body with the plain-text and the
/// HTML part, both UTF-8 quoted-printable. Every line ends in CRLF and is at most 78 characters long, and the whole
/// text is 7-bit ASCII.
struct MIMEMessage: Sendable {
    /// The message as sent after SMTP `DATA`, before dot-stuffing.
    let text: String

    /// Dated `date` (when it is sent), with a new `Message-ID`.
    ///
    /// - Throws: `.permanent` when the subject holds a line break (it would start a header of its own).
    init(_ message: MailMessage, from sender: MailAddress, to recipient: MailAddress, date: Date) throws(MailDeliveryError) {
        let uniqueID = UUID.random()
        guard !message.subject.contains(where: \.isNewline) else {
            throw .permanent("the subject contains a line break")
        }
        // `=_` never occurs in quoted-printable text, so the boundary cannot collide with a part's content.
        let boundary = "=_FitBase_\(uniqueID.uuidString)"
        let headers = [
            "Date: \(Self.headerDate(date))",
            "From: \(sender.headerValue)",
            "To: \(recipient.headerValue)",
            "Subject: \(Self.headerText(message.subject, after: "Subject: "))",
            "Message-ID: <\(uniqueID.uuidString.lowercased())@\(sender.domain)>",
            "MIME-Version: 1.0",
            "Content-Type: multipart/alternative;\r\n boundary=\"\(boundary)\"",
        ]
        let parts = [("text/plain", message.text), ("text/html", message.html)].map { type, content in
            """
            --\(boundary)\r
            Content-Type: \(type); charset=UTF-8\r
            Content-Transfer-Encoding: quoted-printable\r
            \r
            \(MIMEEncoding.quotedPrintable(content))\r

            """
        }
        text = headers.joined(separator: "\r\n") + "\r\n\r\n" + parts.joined() + "--\(boundary)--\r\n"
    }

    /// `text` as it stands when it is ASCII and fits on the header line, else as encoded-words.
    private static func headerText(_ text: String, after name: String) -> String {
        let fits = name.count + text.count <= 78 && text.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F }
        return fits ? text : MIMEEncoding.encodedWords(text)
    }

    /// RFC 5322 date-time in UTC: `Tue, 03 Mar 2026 09:05:00 +0000`.
    private static func headerDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }
}
