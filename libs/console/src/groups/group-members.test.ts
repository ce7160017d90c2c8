import { expect } from 'chai';
import { memberName, parseNumbers } from './group-members';

describe("console: the numbers an operator pastes for a group's members (groups/group-members.tsx)", () => {
  it('When numbers are pasted one a line, with commas or semicolons, then each is read once, "+", blanks, dashes, dots and brackets dropped', () => {
    expect(parseNumbers('+1 (555) 000-1111\n15550002222, 1.555.000.3333; +15550001111')).to.deep.equal([
      '15550001111',
      '15550002222',
      '15550003333',
    ]);
  });

  it('When a LID is pasted, then it stays as written; empty lines and separators alone give nothing', () => {
    expect(parseNumbers('98765432101234@lid\n\n , ;\n+44 20 7946 0000')).to.deep.equal([
      '98765432101234@lid',
      '442079460000',
    ]);
    expect(parseNumbers('')).to.deep.equal([]);
    expect(parseNumbers(' \n,;')).to.deep.equal([]);
  });

  it('When a pasted line is not a number, then it is passed on as typed (the API refuses it and says which)', () => {
    expect(parseNumbers('abc\n٠٥٥٥')).to.deep.equal(['abc', '٠٥٥٥']);
  });

  it('When a member is named, then a number gets its "+", a LID stays, a member with neither is "?"', () => {
    expect(memberName('15550001111')).to.equal('+15550001111');
    expect(memberName('98765@lid')).to.equal('98765@lid');
    expect(memberName({ phone: '15550001111', lid: '98765@lid' })).to.equal('+15550001111');
    expect(memberName({ lid: '98765@lid' })).to.equal('98765@lid');
    expect(memberName({})).to.equal('?');
  });
});
