/** A certificate named in a message, report or log line: its holder's name, never the NRIC/FIN. */
import { commonNameOf, maskIds, shownSubject } from '../../src/pki/x509';

it('leaves out the serialNumber attribute (the NRIC/FIN of a Singpass certificate), keeps the name', () => {
  expect(shownSubject('C=SG\nCN=TAN AH KOW\nserialNumber=S1234567D')).toBe('C=SG, CN=TAN AH KOW');
  expect(shownSubject('C=SG\nO=Sandbox\nCN=Signing CA')).toBe('C=SG, O=Sandbox, CN=Signing CA');
});

it('masks an NRIC/FIN-shaped value anywhere else (a CN made of it), to its last four characters', () => {
  expect(shownSubject('C=SG\nCN=S0000001I')).toBe('C=SG, CN=*****001I');
  expect(maskIds('for T1234567J and G7654321N')).toBe('for *****567J and *****321N');
  expect(commonNameOf('C=SG\nCN=M1234567K\nserialNumber=M1234567K')).toBe('*****567K');
  expect(commonNameOf('C=SG\nCN=TAN AH KOW')).toBe('TAN AH KOW');
  expect(commonNameOf('C=SG')).toBeUndefined();
});
