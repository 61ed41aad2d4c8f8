import { describeMailTransportContract } from '@esig/testkit/mail-transport-contract';
import { startSmtpServer } from '@esig/testkit/smtp';
import { createSmtpTransport } from '../src/index.js';

describeMailTransportContract('SMTP (nodemailer) to a real SMTP server', async () => {
  const smtp = await startSmtpServer();
  const transport = createSmtpTransport(smtp.url);
  return {
    transport,
    delivered: async () => smtp.messages.map((m) => ({ to: m.to, subject: m.subject, text: m.text, html: m.html, messageId: m.messageId })),
    cleanup: async () => {
      transport.close();
      await smtp.close();
    },
  };
});
