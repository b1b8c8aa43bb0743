import { ImagesView } from '../components/images/ImagesView';

export default function ImagesPage() {
  return <ImagesView />;
}
